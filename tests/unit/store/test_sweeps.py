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


def test_a_store_from_before_repeats_gets_each_trials_configuration_key(tmp_path):
    """Schema 5 adds each trial's configuration key and repeat index; rows stored before get their key from their
    record (a repeat of the same configuration shares it), and still load as before."""
    from edgebench.records.result import Repeat
    from edgebench.records.trial import configuration_key

    path = tmp_path / "v4.sqlite"
    db = sqlite3.connect(path)
    for version, script in enumerate(MIGRATIONS[:4], start=1):
        db.executescript(f"BEGIN; {script}; PRAGMA user_version = {version}; COMMIT;")
    old = [result(f"2025010{i}-000000-aaaa", [10.0, 11.0], batch_size=b) for i, b in enumerate((8, 8, 16))]
    for r in old:
        db.execute("INSERT INTO trials (trial_id, status, model, batch_size, result_json) VALUES (?, 'ok', 'lenet', "
                   "?, ?)", (r.trial_id, r.trial.batch_size, r.model_dump_json()))  # fmt: skip
    db.commit()
    db.close()
    with Store(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 5
        assert [t.trial_id for t in store.trials()] == [r.trial_id for r in old]
        repeat = result("20260101-000000-bbbb", [9.0, 9.5]).model_copy(
            update={"repeat": Repeat(config_key=configuration_key(old[0].trial), index=1, planned=2)}
        )
        store.save(repeat)
    rows = sqlite3.connect(path).execute("SELECT config_key, repeat_index FROM trials ORDER BY trial_id").fetchall()
    keys = [k for k, _ in rows]
    assert keys[0] == keys[1] == keys[3] == configuration_key(old[0].trial) != keys[2]
    assert [i for _, i in rows] == [None, None, None, 1]
