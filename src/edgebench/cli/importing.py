"""``edgebench import FILE...``: bring trials into this store from another store or from files a run kept.

Two kinds of file, told apart by their first bytes: another edgebench store (a server's, a colleague's board; its
trials with their series, ids already here refused) and the ``edgebench-unsaved-*.json`` file a run wrote when its
store would not take a finished trial.  Every file is checked before anything is stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.store import Store

_SQLITE_HEADER = b"SQLite format 3\x00"


def import_trials(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Another store (.sqlite) to copy trials from, or edgebench-unsaved-*.json files a run kept."
        ),
    ],
    store: Annotated[
        Path | None, typer.Option(help="SQLite store [default: $EDGEBENCH_STORE or ~/.local/share].")
    ] = None,
) -> int:
    """Copy another store's trials with their series into this store, or store trials a run kept in files."""
    from edgebench.store import Store
    from edgebench.store.rescue import load_unsaved
    from edgebench.store.sqlite import TrialIdTaken

    for path in files:
        if not path.is_file():
            raise UsageError("FILE", f"{path} is not a file; give a .sqlite store or an edgebench-unsaved-*.json file")
    stores = [path for path in files if _is_sqlite(path)]
    kept = [(path, *load_unsaved(path)) for path in files if path not in stores]
    with Store(store) as db:
        for other in stores:
            _import_store(db, other)
        for path, result, series in kept:
            try:
                db.save(result, series)
            except TrialIdTaken:
                typer.echo(f"{path}: trial {result.trial_id} is already in {db.path}; the file can go")
                continue
            typer.echo(f"{path}: stored trial {result.trial_id} in {db.path}; the file can go")
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
