"""``edgebench trials`` and ``edgebench show ID``: finding a stored trial without saving ``--json`` output first."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from edgebench.cli.options import StoreOption


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
    from rich.console import Console

    from edgebench.report.trials_list import trials_table
    from edgebench.report.warnings import hygiene_warnings
    from edgebench.workflows.browse import TrialFilter, list_trials

    rows = list_trials(TrialFilter(model, sweep, target, status, last, store))
    if as_json:
        typer.echo(json.dumps([json.loads(r.model_dump_json()) for r in rows], indent=2))
        return 0
    console = Console()
    console.print(trials_table(rows, when=console.width >= 100))
    for line in hygiene_warnings(rows):
        console.print(line, highlight=False, markup=False)
    return 0


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
    """Print one stored trial's summary exactly as `run` printed it (a repeat: its configuration's repeats under it)."""
    from edgebench.workflows.browse import repeat_group, stored_trial

    result = stored_trial(trial, remeasure=remeasure, store=store)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return 0
    from rich.console import Console

    from edgebench.report.repeats import configuration_line, repeats_table
    from edgebench.report.summary import print_summary

    print_summary(result)
    group = repeat_group(result, store=store)
    if group is not None and result.repeat is not None:
        console = Console()
        sweep = result.sweep.sweep_id if result.sweep else "-"
        title = f"repeat {result.repeat.index + 1} of its configuration's {len(group.results)} (sweep {sweep})"
        console.print(repeats_table(group, title))
        console.print(configuration_line(group), soft_wrap=True)
    return 0
