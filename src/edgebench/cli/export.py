"""``edgebench export``: stored trials as the MNN suite's files, or as one CSV / Parquet table."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError
from edgebench.host.files import write_text_replacing
from edgebench.records.result import TrialResult
from edgebench.report.outputs import check_output_file, check_output_folder
from edgebench.store import Store, default_store_path


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
    if format_ is Format.mnn_suite:
        if out is None:  # a dozen files and folders: never dropped silently into wherever the shell stands
            raise UsageError("--out", "give the folder for the suite's files, e.g. --out mnn-results")
        check_output_folder("--out", out)
    elif out is not None:
        check_output_file("--out", out, f"trials.{format_.value}")
    if format_ is Format.parquet:
        if out is None:
            raise UsageError("--out", "parquet is binary: give a file, e.g. --out trials.parquet")
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UsageError("--format", "parquet needs pyarrow: pip install 'edgebench[parquet]'") from None
    db_path = store or default_store_path()
    if not db_path.exists():
        raise UsageError("--store", f"{db_path} does not exist; run `edgebench run` or `edgebench sweep` first")
    with Store(db_path, read_only=True) as db:
        results = _select(db, sweep or [], host)
        if format_ is Format.mnn_suite:
            from edgebench.formats.mnn_suite.export import write_mnn_suite

            device = device or _target_device_name(results)
            assert out is not None
            written = write_mnn_suite(results, out, device, db.series)
            for path in written:
                typer.echo(str(path))
            typer.echo(f"wrote {len(written)} files under {out}", err=True)
            return 0
        from edgebench.report.tables import STEP_COLUMNS, columns_of, step_rows, to_csv, trial_row, write_parquet

        if table is TableKind.steps:
            rows = step_rows(results, db.series)
            columns = list(STEP_COLUMNS)
        else:
            rows = [trial_row(r) for r in results]
            columns = columns_of(rows)
    if format_ is Format.parquet:
        assert out is not None
        write_parquet(rows, columns, out)
        typer.echo(f"{out}: {len(rows)} rows, {len(columns)} columns")
        return 0
    text = to_csv(rows, columns)
    if out is None:
        sys.stdout.write(text)
    else:
        write_text_replacing(out, text)
        typer.echo(f"{out}: {len(rows)} rows, {len(columns)} columns")
    return 0


def _select(db: Store, sweeps: list[str], host: str | None) -> list[TrialResult]:
    if not sweeps:
        results = db.query(hostname=host)
    else:
        results = []
        for sweep_id in sweeps:
            if not db.sweep_exists(sweep_id):
                known = ", ".join(db.sweep_ids()) or "none yet"
                raise UsageError("--sweep", f"no sweep {sweep_id!r} in {db.path} (sweeps: {known})")
            results.extend(db.query(sweep_id=sweep_id, hostname=host))
    if not results:
        raise UsageError("--host" if host else "--store", f"no trials to export from {db.path}")
    return results


def _target_device_name(results: list[Any]) -> str:
    """``--device`` when not given: the ``device_name`` of the target the trials ran on (the configuration file's
    ``targets:``), when they all share one."""
    names = {r.device.device_name for r in results}
    if len(names) == 1 and None not in names:
        return str(names.pop()).replace(" ", "_")
    raise UsageError("--device", "name the device for the suite's folder and file names, e.g. --device MEIZU")
