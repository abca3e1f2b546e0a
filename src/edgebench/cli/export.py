"""``edgebench export``: stored trials as the MNN suite's files, or as one CSV / Parquet table."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import StoreOption


class Format(str, Enum):
    mnn_suite = "mnn-suite"
    csv = "csv"
    parquet = "parquet"


class TableKind(str, Enum):
    trials = "trials"
    steps = "steps"


def export(
    format_: Annotated[Format, typer.Option("--format", "-f", help="mnn-suite, csv or parquet.")] = Format.csv,
    device: Annotated[
        str | None, typer.Option(help="mnn-suite: the device name in folder and file names, e.g. MEIZU.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="mnn-suite: folder [default: .]; csv: file [default: stdout]; parquet: file (required)."),
    ] = None,
    sweep: Annotated[list[str] | None, typer.Option(help="Only trials of this sweep (repeatable).")] = None,
    host: Annotated[str | None, typer.Option(help="Only trials run on this hostname.")] = None,
    table: Annotated[
        TableKind, typer.Option(help="csv/parquet: one row per trial, or per timed step.")
    ] = TableKind.trials,
    store: StoreOption = None,
) -> int:
    """Write stored trials in the MNN suite's layout and columns, or as a CSV / Parquet table of every measurement."""
    from edgebench.workflows.exchange import ExportRequest, export_trials

    done = export_trials(ExportRequest(format_.value, device, out, sweep or [], host, table.value, store))
    if format_ is Format.mnn_suite:
        for path in done.files:
            typer.echo(str(path))
        typer.echo(f"wrote {len(done.files)} files under {out}", err=True)
    elif done.text is not None:
        sys.stdout.write(done.text)
    else:
        typer.echo(f"{out}: {done.rows} rows, {done.columns} columns")
    return 0
