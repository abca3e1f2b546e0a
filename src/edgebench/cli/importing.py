"""``edgebench import OTHER.sqlite``: another store's trials (a server's, a colleague's board) into this one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.errors import UsageError


def import_trials(
    other: Annotated[Path, typer.Argument(help="The store file to copy trials from (opened read-only).")],
    store: Annotated[
        Path | None, typer.Option(help="SQLite store [default: $EDGEBENCH_STORE or ~/.local/share].")
    ] = None,
) -> int:
    """Copy another store's trials, with their series, into this store; trials already here are refused."""
    from edgebench.store import Store
    from edgebench.store.importing import import_store

    if not other.is_file():
        raise UsageError("OTHER", f"{other} is not a file; give the .sqlite store to import")
    with Store(store) as db:
        if other.resolve() == db.path.resolve():
            raise UsageError("OTHER", f"{other} is this store; give another one")
        try:
            summary = import_store(db, other)
        except ValueError as exc:
            raise UsageError("OTHER", str(exc)) from None
        typer.echo(f"imported {len(summary.imported)} trials from {other} into {db.path}")
        if summary.refused:
            shown = ", ".join(summary.refused[:5]) + (" ..." if len(summary.refused) > 5 else "")
            typer.echo(f"refused {len(summary.refused)} trials already in {db.path}: {shown}", err=True)
    return 0
