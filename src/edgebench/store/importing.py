"""Bringing another store's trials, with their series and sweeps, into this one (``edgebench import``).

A server's traced trial is recorded on the server; its store comes back as a file and its trials become
``--cloud-trial`` candidates here.  The other file is opened read-only and never migrated (it may belong to
another edgebench).  A trial id already here is refused, never overwritten: ids carry the time and 32 random
bits, so the same id means the same trial was imported before.
"""

from __future__ import annotations

import gzip
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path

from edgebench.errors import shortened
from edgebench.parsing import json_text
from edgebench.records.result_schema import load_result
from edgebench.store.sqlite import Store


@dataclass(frozen=True)
class ImportSummary:
    imported: tuple[str, ...]
    #: Ids already in this store: left as they are.
    refused: tuple[str, ...]


def import_store(store: Store, other: Path) -> ImportSummary:
    """Copy every trial of ``other`` that ``store`` lacks, each with its series (and its sweep's record), in one
    transaction: a trial or series that cannot be read refuses the import whole, naming the trial, and nothing of
    it is stored (call it inside :meth:`Store.batch` to make several imports one)."""
    with store.batch():
        return _copy(store, other)


#: What reading one stored trial or series can raise when its bytes are not what they should be.
_DAMAGED = (ValueError, TypeError, KeyError, AttributeError, OSError, EOFError, zlib.error, RecursionError)


def _series(source: sqlite3.Connection, trial_id: str) -> dict[str, str]:
    out = {}
    for name, encoding, data in source.execute(
        "SELECT name, encoding, data FROM series WHERE trial_id = ?", (trial_id,)
    ):
        out[str(name)] = gzip.decompress(data).decode() if encoding == "gzip" else bytes(data).decode()
    return out


def _copy(store: Store, other: Path) -> ImportSummary:
    source = sqlite3.connect(f"file:{other}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "trials" not in tables:
            raise ValueError(f"{other} is not an edgebench store (it has no trials table)")
        sweeps = {}
        if "sweeps" in tables:
            sweeps = {r[0]: (r[1], r[2]) for r in source.execute("SELECT sweep_id, planned, config_json FROM sweeps")}
        imported, refused = [], []
        rows = source.execute("SELECT trial_id, result_json FROM trials ORDER BY rowid").fetchall()
        for trial_id, result_json in rows:
            if trial_id in store.trial_ids(trial_id):
                refused.append(trial_id)
                continue
            try:
                result = load_result(json_text(result_json))
                series = _series(source, trial_id)
            except _DAMAGED as exc:
                detail = shortened(str(exc).splitlines()[0] if str(exc).strip() else "", 100)
                raise ValueError(
                    f"{other}: trial {shortened(repr(trial_id), 40)} cannot be read ({type(exc).__name__}: {detail});"
                    " nothing was imported"
                ) from None
            if result.sweep is not None and not store.sweep_exists(result.sweep.sweep_id):
                planned, config = sweeps.get(result.sweep.sweep_id, (0, "{}"))
                store.add_sweep(result.sweep.sweep_id, planned, config)
            store.save(result, series)
            imported.append(trial_id)
    except sqlite3.DatabaseError as exc:
        raise ValueError(f"{other} is not a readable SQLite store: {exc}") from None
    finally:
        source.close()
    return ImportSummary(tuple(imported), tuple(refused))
