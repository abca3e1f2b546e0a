"""``edgebench import`` of a damaged store (issue 39): one bad row or series blob imports nothing (one
transaction), says which trial in one line, and a refused import leaves no empty destination store."""

from __future__ import annotations

import sqlite3

import pytest

from edgebench.store import Store
from tests.factories import add, refused

IDS = [f"20260101-000000-aaaa000{i}" for i in range(1, 4)]


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "source.sqlite"
    with Store(path) as db:
        for trial_id in IDS:
            add(db, trial_id, [10.0, 11.0, 12.0])
    return path


def damage(path, sql, *args):
    with sqlite3.connect(path) as db:
        db.execute(sql, args)
    db.close()


@pytest.mark.parametrize(
    ("sql", "args"),
    [("UPDATE series SET data = ? WHERE trial_id = ?", (b"\x1f\x8bnot gzip", IDS[2])),
     ("UPDATE series SET data = ?, encoding = 'plain' WHERE trial_id = ?", (b"\xff\xfe", IDS[2])),
     ("UPDATE trials SET result_json = ? WHERE trial_id = ?", ('{"schema_version": 99}', IDS[2])),
     ("UPDATE trials SET result_json = ? WHERE trial_id = ?", ("[1, 2]", IDS[2])),
     ("UPDATE trials SET result_json = ? WHERE trial_id = ?", ("{" * 3, IDS[2]))],
    ids=["bad-gzip", "bad-utf8", "schema-99", "not-an-object", "not-json"],
)  # fmt: skip
def test_one_bad_trial_imports_nothing_into_a_new_store(source, tmp_path, capsys, sql, args):
    damage(source, sql, *args)
    destination = tmp_path / "new" / "store.sqlite"
    line = refused(capsys, "import", str(source), "--store", str(destination))
    assert IDS[2] in line and "nothing was imported" in line
    assert not destination.exists()  # no empty store left behind


def test_one_bad_trial_imports_nothing_into_an_existing_store(source, tmp_path, capsys):
    damage(source, "UPDATE series SET data = ? WHERE trial_id = ?", b"junk", IDS[2])
    destination = tmp_path / "store.sqlite"
    with Store(destination) as db:
        add(db, "20250101-000000-bbbb0001", [10.0])
    refused(capsys, "import", str(source), "--store", str(destination))
    with Store(destination) as db:
        assert db.trial_ids("") == ["20250101-000000-bbbb0001"]


def test_a_refused_import_of_a_file_that_is_no_store_leaves_no_store(tmp_path, capsys):
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    destination = tmp_path / "store.sqlite"
    refused(capsys, "import", str(junk), "--store", str(destination))
    assert not destination.exists()
