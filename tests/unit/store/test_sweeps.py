"""The store's sweep tables: a version-1 store upgrades in place, and trials are linked to their sweep atomically."""

import sqlite3

import pytest

from edgebench.store import Store
from edgebench.store.sqlite import MIGRATIONS, SCHEMA_VERSION
from tests.factories import result


def test_a_store_from_before_sweeps_upgrades_in_place(tmp_path):
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.executescript(f"BEGIN; {MIGRATIONS[0]}; PRAGMA user_version = 1; COMMIT;")
    old = result("20250101-000000-aaaa", [10.0, 11.0])
    db.execute(
        "INSERT INTO trials (trial_id, status, model, batch_size, result_json) VALUES (?, 'ok', 'lenet', 8, ?)",
        (old.trial_id, old.model_dump_json()),
    )
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert [t.trial_id for t in store.trials()] == [old.trial_id]
        assert store.sweep_ids() == [] and store.sweep_done("any") == {}


def test_trials_are_linked_to_their_sweep_and_key(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        store.add_sweep("grid", 2, '{"config": {}}')
        store.save(result("20260101-000000-0001", [10.0, 11.0], sweep=("grid", "k1", 0)))
        store.save(result("20260101-000000-0002", [10.0, 11.0], sweep=("grid", "k2", 1), status="crashed"))
        store.save(result("20260101-000000-0003", [10.0, 11.0]))  # not part of a sweep
        assert store.sweep_done("grid") == {"k1": "ok", "k2": "crashed"}
        assert [r.trial_id for r in store.query(sweep_id="grid")] == ["20260101-000000-0001", "20260101-000000-0002"]
        assert len(store.query(hostname="board-a")) == 3 and store.hostnames() == ["board-a"]
        store.add_sweep("grid", 3, "{}")  # a resumed sweep may plan more
        assert store.sweep_exists("grid") and not store.sweep_exists("other")


def test_a_trial_of_an_unknown_sweep_is_refused_whole(tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(sqlite3.IntegrityError):
            store.save(result("20260101-000000-0001", [10.0], sweep=("never-added", "k", 0)))
        assert store.trials() == []  # the trial row went back with the failed link
