"""A finished trial the store would not take, kept in a file until ``edgebench import`` puts it in a store.

A measurement costs minutes and cannot be repeated exactly (the device warms, other load comes and goes), so a
write that fails after the trial ran must not lose it: the full record and its series go to a JSON file whose path
the error line names.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError
from edgebench.records.result import TrialResult
from edgebench.records.result_schema import load_result

if TYPE_CHECKING:
    from edgebench.store.sqlite import Store

#: Marks a rescue file, so that ``import`` refuses any other JSON with a clear line.
KIND = "edgebench-unsaved-trial"


class NotStored(Exception):
    """The store refused a finished trial; the record is in ``kept_in`` (printed as one line, exit 1)."""

    def __init__(self, message: str, kept_in: Path) -> None:
        super().__init__(message)
        self.kept_in = kept_in


def save_or_keep(store: Store, result: TrialResult, series: dict[str, str]) -> None:
    """Store the trial; if the store fails now (damaged, disk full, gone), keep it in a file and say which."""
    try:
        store.save(result, series)
    except (sqlite3.Error, OSError) as exc:
        kept = keep_unsaved(result, series, store.path)
        raise NotStored(
            f"--store: {store.path} did not take trial {result.trial_id} ({exc}); it is kept in {kept}: "
            f"`edgebench import {kept}` stores it once the store is fixed (or with --store ANOTHER)",
            kept,
        ) from None


def keep_unsaved(result: TrialResult, series: dict[str, str], store_path: Path) -> Path:
    """Write ``result`` and ``series`` beside the store, else in the current folder, else in the temp folder."""
    payload = json.dumps({"kind": KIND, "result": result.model_dump(mode="json"), "series": series})
    name = f"edgebench-unsaved-{result.trial_id}.json"
    for folder in (store_path.parent, Path.cwd(), Path(tempfile.gettempdir())):
        try:
            return _write_new(folder / name, payload).resolve()
        except OSError:
            continue
    raise OSError(f"no folder would take {name}")


def _write_new(path: Path, text: str) -> Path:
    """Create ``path`` with ``text``, synced to disk; a half-written file is removed, never left behind."""
    with open(path, "x", encoding="utf-8") as out:
        try:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        except OSError:
            path.unlink(missing_ok=True)
            raise
    return path


def load_unsaved(path: Path) -> tuple[TrialResult, dict[str, str]]:
    """The trial and series a rescue file holds; anything else is a usage error naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError("FILE", f"{path} cannot be read as a kept trial ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise UsageError("FILE", f'{path} is not a trial kept by edgebench (no "kind": "{KIND}")')
    return load_result(data["result"]), dict(data.get("series") or {})
