"""A store other people wrote (issue 39): one bad row (a future schema, junk) no longer breaks ``trials``, ``report``
and ``export`` for the whole store, ``_`` and ``%`` are literal in id prefixes, and a command that only reads
leaves an older store's file as it found it."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.cli import main
from edgebench.store import Store
from edgebench.store.sqlite import UnreadableTrial, like_prefix
from tests.factories import add, refused
from tests.paths import GOLDEN_STORE

GOOD, FUTURE, JUNK = "20260101-000000-aaaa0001", "20260101-000000-aaaa0002", "20260101-000000-aaaa0003"


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as db:
        for trial_id in (GOOD, FUTURE, JUNK):
            add(db, trial_id, [10.0, 11.0])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE trials SET result_json = ? WHERE trial_id = ?", ('{"schema_version": 99}', FUTURE))
        db.execute("UPDATE trials SET result_json = ? WHERE trial_id = ?", ("[" * 50_000, JUNK))
        db.execute("UPDATE series SET data = ? WHERE trial_id = ?", (b"not gzip", GOOD))
    db.close()
    return path


@pytest.mark.parametrize("argv", [["trials"], ["export"], ["trials", "--json"]])
def test_one_bad_row_is_skipped_with_a_note(store, capsys, argv):
    assert main([*argv, "--store", str(store)]) == 0
    captured = capsys.readouterr()
    assert GOOD in captured.out and FUTURE not in captured.out
    notes = captured.err.strip().splitlines()
    assert len(notes) == 2 and all(line.startswith("edgebench: note: skipped trial") for line in notes)
    assert "schema 99 is newer" in notes[0] and "nested too deep" in notes[1]


def test_a_bad_row_or_series_asked_for_by_id_is_one_line(store, capsys):
    assert "cannot be read" in refused(capsys, "show", FUTURE, "--store", str(store))
    with Store(store) as db, pytest.raises(UnreadableTrial, match="events series"):
        db.series(GOOD, "events")


def test_underscore_and_percent_are_literal_in_id_prefixes(tmp_path):
    with Store(tmp_path / "s.sqlite") as db:
        add(db, "20260101-000000-aaaa0001", [10.0])
        assert db.trial_ids("2026010_") == [] and db.trial_ids("2026%") == []
        assert db.trial_ids("20260101-") == ["20260101-000000-aaaa0001"]
        with pytest.raises(KeyError):
            db.get("_")


@settings(max_examples=100)
@given(st.text(max_size=12))
def test_a_like_prefix_matches_exactly_the_ids_that_start_with_it(prefix):
    ids = ["2026_x", "2026%y", "2026ab", "a\\b", prefix + "tail"]
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (id TEXT)")
    db.executemany("INSERT INTO t VALUES (?)", [(i,) for i in ids])
    found = {r[0] for r in db.execute("SELECT id FROM t WHERE id LIKE ? ESCAPE '\\'", (like_prefix(prefix),))}
    expected = {i for i in ids if i.startswith(prefix) or (i.lower().startswith(prefix.lower()) and prefix.isascii())}
    assert {i for i in ids if i.startswith(prefix)} <= found <= expected  # LIKE folds ASCII case, nothing else


def test_a_reading_command_leaves_an_older_store_as_it_found_it(tmp_path, capsys):
    old = tmp_path / "v3.sqlite"
    shutil.copy(GOLDEN_STORE, old)
    before = old.read_bytes()
    assert main(["trials", "--store", str(old)]) == 0 and "lenet" in capsys.readouterr().out
    assert old.read_bytes() == before  # (SQLite's -wal and -shm beside a WAL-mode store are its readers' own)


@settings(max_examples=80)
@given(st.one_of(st.binary(max_size=120),
                 st.recursive(st.none() | st.integers() | st.text(max_size=8),
                              lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
                              max_leaves=8).map(lambda v: json.dumps(v).encode()),
                 st.dictionaries(st.sampled_from(["kind", "version", "result", "series", "events"]),
                                 st.none() | st.integers() | st.text(max_size=5) | st.just("edgebench-unsaved-trial"),
                                 max_size=5).map(lambda v: json.dumps(v).encode())))  # fmt: skip
def test_any_rescue_file_loads_or_is_one_usage_line(tmp_path_factory, data):
    """A rescue file is data too (``edgebench import FILE``): a finished trial or one line naming FILE."""
    from edgebench.errors import UsageError
    from edgebench.store.rescue import load_unsaved

    path = tmp_path_factory.mktemp("kept") / "edgebench-unsaved-x.json"
    path.write_bytes(data)
    try:
        load_unsaved(path)
    except UsageError as exc:
        assert exc.field == "FILE" and "\n" not in str(exc)
