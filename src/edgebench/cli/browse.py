"""``edgebench trials`` and ``edgebench show ID``: finding a stored trial without saving ``--json`` output first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult
    from edgebench.store import Store


def open_store(path: Path | None):  # type: ignore[no-untyped-def]
    """The store read-only; a missing one is a usage error naming ``--store``."""
    from edgebench.store import Store, default_store_path

    path = path or default_store_path()
    if not Path(path).exists():
        raise UsageError("--store", f"{path} does not exist; run `edgebench run` first, or give the store to read")
    return Store(path, read_only=True)


def trials(
    model: Annotated[str | None, typer.Option(help="Only this model.")] = None,
    sweep: Annotated[str | None, typer.Option(help="Only this sweep's trials.")] = None,
    target: Annotated[str | None, typer.Option(help="Only trials run on this target, e.g. local or ssh://pi.")] = None,
    status: Annotated[str | None, typer.Option(help="Only trials with this status, e.g. ok or oom.")] = None,
    last: Annotated[int | None, typer.Option(help="Only the last N trials (after the filters).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of the full records.")] = False,
    store: StoreOption = None,
) -> int:
    """List stored trials: id, when, model, backend, target, batch, key figures, status."""
    from typing import get_args

    from edgebench.records.result import Status

    if status is not None and status not in get_args(Status):
        raise UsageError("--status", f"{status!r} is not a status; choose from {', '.join(get_args(Status))}")
    if last is not None and last < 1:
        raise UsageError("--last", "must be at least 1")
    with open_store(store) as db:
        if sweep is not None and not db.sweep_exists(sweep):
            raise UsageError(
                "--sweep", f"no sweep {sweep!r} in {db.path} (sweeps: {', '.join(db.sweep_ids()) or 'none'})"
            )
        rows = db.query(sweep_id=sweep)
    rows = [r for r in rows if (model is None or r.trial.model == model) and (target is None or r.target == target)
            and (status is None or r.status == status)]  # fmt: skip
    if last is not None:
        rows = rows[-last:]
    if as_json:
        typer.echo(json.dumps([json.loads(r.model_dump_json()) for r in rows], indent=2))
        return 0
    from rich.console import Console

    from edgebench.report.trials_list import trials_table

    console = Console()
    console.print(trials_table(rows, when=console.width >= 100))
    from edgebench.report.warnings import hygiene_warnings

    for line in hygiene_warnings(rows):
        console.print(line, highlight=False, markup=False)
    return 0


def _remeasured(db: Store, result: TrialResult) -> TrialResult:
    from edgebench.launch.trial import remeasure
    from edgebench.store.trials import finished_of

    try:
        return remeasure(finished_of(db, result)).result
    except ValueError as exc:
        raise UsageError("--remeasure", str(exc)) from None


def show(
    trial: Annotated[str, typer.Argument(help="Trial id, or a unique prefix of one.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored record as JSON.")] = False,
    remeasure: Annotated[
        bool,
        typer.Option(
            "--remeasure",
            help="Measure the trial again from its kept events and samples with this edgebench (after a "
            "measurement fix) and print that instead of the stored figures; nothing is written.",
        ),
    ] = False,
    store: StoreOption = None,
) -> int:
    """Print one stored trial's summary exactly as `run` printed it."""
    with open_store(store) as db:
        try:
            result = db.get(trial)
        except KeyError as exc:
            raise UsageError("TRIAL", f"{exc.args[0]} in {db.path}; `edgebench trials` lists them") from None
        if remeasure:
            result = _remeasured(db, result)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return 0
    from edgebench.report.summary import print_summary

    print_summary(result)
    return 0
