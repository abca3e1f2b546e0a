"""``edgebench import FILE...``: bring trials into this store from another store or from files a run kept.

Two kinds of file, told apart by their first bytes: another edgebench store (a server's, a colleague's board; its
trials with their series, ids already here refused) and the ``edgebench-unsaved-*.json`` file a run wrote when its
store would not take a finished trial.  Every file is checked before anything is stored.

``--format mnn-suite DIR... --device NAME`` reads result folders of the MNN-based suite instead (its
``processed_data``, ``train_stamp``, ``usage_monitor`` and ``train_bench`` files), as trials marked imported.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.store import Store

_SQLITE_HEADER = b"SQLite format 3\x00"


class ImportFormat(str, Enum):
    edgebench = "edgebench"
    mnn_suite = "mnn-suite"


def import_trials(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Another store (.sqlite) to copy trials from, or edgebench-unsaved-*.json files a run kept; "
            "with --format mnn-suite, the suite's result folders (MEIZU_Freq_1708800/ ...)."
        ),
    ],
    format_: Annotated[
        ImportFormat,
        typer.Option("--format", "-f", help="edgebench (stores, kept files) or mnn-suite (the suite's folders)."),
    ] = ImportFormat.edgebench,
    device: Annotated[
        str | None, typer.Option(help="mnn-suite: the phone the folders were measured on, e.g. 'Meizu 16T'.")
    ] = None,
    store: StoreOption = None,
) -> int:
    """Copy another store's trials with their series into this store, store trials a run kept in files, or read the
    MNN-based suite's result folders as imported trials."""
    from edgebench.store.rescue import load_unsaved
    from edgebench.store.sqlite import TrialIdTaken, created_or_removed
    from edgebench.store.trials import save_finished

    if format_ is ImportFormat.mnn_suite:
        return _import_mnn_suite(files, device, store)
    if device is not None:
        raise UsageError("--device", "names the phone of MNN-suite folders; give it with --format mnn-suite")

    for path in files:
        if not path.is_file():
            raise UsageError("FILE", f"{path} is not a file; give a .sqlite store or an edgebench-unsaved-*.json file")
    stores = [path for path in files if _is_sqlite(path)]
    kept = [(path, load_unsaved(path)) for path in files if path not in stores]
    with created_or_removed(store) as db, db.batch():  # every file's trials land together, or none
        for other in stores:
            _import_store(db, other)
        for path, finished in kept:
            try:
                save_finished(db, finished)
            except TrialIdTaken:
                typer.echo(f"{path}: trial {finished.trial_id} is already in {db.path}; the file can go")
                continue
            typer.echo(f"{path}: stored trial {finished.trial_id} in {db.path}; the file can go")
    return 0


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(_SQLITE_HEADER)) == _SQLITE_HEADER


def _import_store(db: Store, other: Path) -> None:
    from edgebench.store.importing import import_store

    if other.resolve() == db.path.resolve():
        raise UsageError("FILE", f"{other} is this store; give another one")
    try:
        summary = import_store(db, other)
    except ValueError as exc:
        raise UsageError("FILE", str(exc)) from None
    typer.echo(f"imported {len(summary.imported)} trials from {other} into {db.path}")
    if summary.refused:
        shown = ", ".join(summary.refused[:5]) + (" ..." if len(summary.refused) > 5 else "")
        typer.echo(f"refused {len(summary.refused)} trials already in {db.path}: {shown}", err=True)


def _import_mnn_suite(folders: list[Path], device: str | None, store: Path | None) -> int:
    """Read every folder first (a bad one stores nothing), then store each trial; ids already here are reported."""
    from edgebench.formats.mnn_suite.importing import read_folder
    from edgebench.store.sqlite import TrialIdTaken, created_or_removed

    if not device or not device.strip():
        raise UsageError("--device", "name the phone the suite measured on, e.g. --device 'Meizu 16T'")
    read = [(folder, read_folder(folder, device.strip())) for folder in folders]
    with created_or_removed(store) as db, db.batch():
        for folder, imported in read:
            stored = already = 0
            for result, series in imported.trials:
                try:
                    db.save(result, series)
                    stored += 1
                except TrialIdTaken:
                    already += 1
            line = f"{folder}: imported {stored} trials into {db.path}"
            typer.echo(line + (f" ({already} already there)" if already else ""))
            for skipped in imported.skipped:
                typer.echo(f"not imported: {skipped}", err=True)
    return 0
