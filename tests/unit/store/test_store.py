"""The embedded store: a real SQLite file, versioned schema, whole-trial transactions."""

import sqlite3

import pytest

from edgebench.records.result import Latency, TrialResult, stored_trial
from edgebench.store import Store, default_store_path
from edgebench.store.sqlite import SCHEMA_VERSION, TrialIdTaken


def result(trial_id: str, **groups) -> TrialResult:
    trial = stored_trial({"model": "lenet", "batch_size": 8, "threads": 2, "cores": [0, 1], "steps": 2, "warmup": 1})
    return TrialResult(trial_id=trial_id, status="ok", trial=trial, **groups)


def test_save_get_and_series_round_trip(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as store:
        store.save(result("20260101-000000-aaaa", latency=Latency(throughput_sps=12.5)), {"samples": "t_ns,a\n1,2\n"})
    with Store(path) as store:
        got = store.get("20260101-000000-aaaa")
        assert got.latency.throughput_sps == 12.5
        assert store.get("20260101-000000-a").trial_id == got.trial_id  # prefix lookup
        assert store.series(got.trial_id, "samples") == "t_ns,a\n1,2\n"
        assert store.series(got.trial_id, "nothing") is None
        assert [t.trial_id for t in store.trials(model="lenet")] == [got.trial_id]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_ambiguous_or_missing_ids(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.save(result("20260101-000000-aaaa"))
        store.save(result("20260101-000000-aaab"))
        with pytest.raises(KeyError, match="more than one"):
            store.get("20260101-000000-aa")
        with pytest.raises(KeyError, match="no trial"):
            store.get("1999")


def test_failed_save_leaves_nothing(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(AttributeError):  # not text: fails after the trials row was inserted
            store.save(result("20260101-000000-aaaa"), {"samples": object()})  # type: ignore[dict-item]
        assert store.trials() == []


def test_a_stored_trial_is_never_overwritten(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.save(result("20260101-000000-aaaa", latency=Latency(throughput_sps=1.0)), {"samples": "first"})
        with pytest.raises(TrialIdTaken, match="20260101-000000-aaaa is already in"):
            store.save(result("20260101-000000-aaaa", latency=Latency(throughput_sps=2.0)), {"samples": "second"})
        assert store.get("20260101-000000-aaaa").latency.throughput_sps == 1.0
        assert store.series("20260101-000000-aaaa", "samples") == "first"


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "s.sqlite"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(RuntimeError, match="newer"):
        Store(path)


def test_default_path_honours_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("EDGEBENCH_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("EDGEBENCH_STORE")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_store_path() == tmp_path / "edgebench" / "edgebench.sqlite"
