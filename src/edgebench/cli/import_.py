"""``edgebench import FILE...``: store the trials a run kept in files because its store would not take them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def import_trials(
    files: Annotated[list[Path], typer.Argument(help="edgebench-unsaved-*.json files named by the error line.")],
    store: Annotated[
        Path | None, typer.Option(help="SQLite store [default: $EDGEBENCH_STORE or ~/.local/share].")
    ] = None,
) -> int:
    """Store trials that were measured but could not be written (the error line named the file that keeps each)."""
    from edgebench.store import Store
    from edgebench.store.rescue import load_unsaved
    from edgebench.store.sqlite import TrialIdTaken

    kept = [(path, *load_unsaved(path)) for path in files]  # every file is checked before any is stored
    with Store(store) as db:
        for path, result, series in kept:
            try:
                db.save(result, series)
            except TrialIdTaken:
                typer.echo(f"{path}: trial {result.trial_id} is already in {db.path}; the file can go")
                continue
            typer.echo(f"{path}: stored trial {result.trial_id} in {db.path}; the file can go")
    return 0
