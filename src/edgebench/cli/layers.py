"""``edgebench layers TRIAL``: the per-layer table of a traced trial, rebuilt from its stored series."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import JsonOption, StoreOption, say
from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.workflows.layers import StepCounters


def layers(
    trial: Annotated[str, typer.Argument(help="Trial id, or a unique prefix of one.")],
    depth: Annotated[
        int | None, typer.Option(help="Fold modules below this depth into their ancestor (0 = the whole model).")
    ] = None,
    sort: Annotated[str, typer.Option(help="Row order: order (as the model runs) or time (slowest first).")] = "order",
    top: Annotated[int | None, typer.Option(help="Show only the first N rows (after sorting).")] = None,
    roofline: Annotated[bool, typer.Option("--roofline", help="Show the roofline view instead of the table.")] = False,
    power_channel: Annotated[
        str | None,
        typer.Option(help="Power channel to attribute, e.g. VDD_IN or package-0 [default: the device total]."),
    ] = None,
    refresh_peak: Annotated[
        bool, typer.Option("--refresh-peak", help="Measure the device's GEMM/copy peak again (this device only).")
    ] = False,
    no_measure: Annotated[
        bool, typer.Option("--no-measure", help="Never run the peak micro-benchmark; use a stored figure or none.")
    ] = False,
    as_json: JsonOption = False,
    store: StoreOption = None,
) -> int:
    """Per-layer forward/backward time, share of the step, CPU, energy, FLOPs and roofline of a traced trial."""
    if sort not in ("order", "time"):
        raise UsageError("--sort", f"{sort!r} is not a row order; choose order or time")
    if top is not None and top < 1:
        raise UsageError("--top", "must be at least 1")
    from edgebench.report.layers import print_layers
    from edgebench.workflows.layers import LayersRequest, StepCounters, layer_table

    report = layer_table(LayersRequest(trial, depth, power_channel, refresh_peak, no_measure, store), notify=say)
    if isinstance(report, StepCounters):
        return _step_counters(report, as_json)  # a --command trial: counted per step and over its run, no layers
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        print_layers(report, roofline=roofline, sort=sort, top=top)
    return 0


def _step_counters(counted: StepCounters, as_json: bool) -> int:
    """``--counters`` of a trial without layer spans: its steps' counts and the whole run's."""
    import json

    from edgebench.report.layers import print_step_counters

    result = counted.result
    if as_json:
        doc = {"trial_id": result.trial_id, "granularity": "steps", "steps": counted.rows, "run": counted.run}
        typer.echo(json.dumps(doc, indent=2))
        return 0
    what = result.trial.command or result.trial.model
    title = f"{what}  [{result.trial_id}]  perf counters per step (no layer spans: the command is one process tree)"
    print_step_counters(title, counted.rows, counted.run)
    for note in result.measurement_notes or []:
        if note.startswith("perf counters"):
            typer.echo(note)
    return 0
