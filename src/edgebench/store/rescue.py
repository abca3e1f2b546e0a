"""A finished trial the store would not take, kept in a file until ``edgebench import`` puts it in a store.

A measurement costs minutes and cannot be repeated exactly (the device warms, other load comes and goes), so a
write that fails after the trial ran must not lose it: the :class:`~edgebench.records.finished.FinishedTrial` goes
to a file holding its JSON, whose path the error line names.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError
from edgebench.host.files import file_name
from edgebench.records.finished import FinishedTrial
from edgebench.store.trials import save_finished

if TYPE_CHECKING:
    from edgebench.store.sqlite import Store


class NotStored(Exception):
    """The store refused a finished trial; the record is in ``kept_in`` (printed as one line, exit 1)."""

    def __init__(self, message: str, kept_in: Path) -> None:
        super().__init__(message)
        self.kept_in = kept_in


def save_or_keep(store: Store, finished: FinishedTrial) -> None:
    """Store the trial; if the store fails now (damaged, disk full, gone), keep it in a file and say which."""
    try:
        save_finished(store, finished)
    except (sqlite3.Error, OSError) as exc:
        kept = keep_unsaved(finished, store.path)
        raise NotStored(
            f"--store: {store.path} did not take trial {finished.trial_id} ({exc}); it is kept in {kept}: "
            f"`edgebench import {kept}` stores it once the store is fixed (or with --store ANOTHER)",
            kept,
        ) from None


def keep_unsaved(finished: FinishedTrial, store_path: Path) -> Path:
    """Write the record's JSON beside the store, else in the current folder, else in the temp folder."""
    payload = finished.to_json()
    name = f"edgebench-unsaved-{file_name(finished.trial_id)}.json"  # the id can come from a fleet host's reply
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


def load_unsaved(path: Path) -> FinishedTrial:
    """The finished trial a rescue file holds; anything else is a usage error naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError("FILE", f"{path} cannot be read as a kept trial ({exc})") from None
    try:
        return FinishedTrial.from_json(text)
    except ValueError as exc:
        if str(exc).startswith("no "):  # JSON, but not ours
            raise UsageError("FILE", f"{path} is not a trial kept by edgebench ({exc})") from None
        raise UsageError("FILE", f"{path} cannot be read as a kept trial ({exc})") from None
