"""``edgebench layers TRIAL``: the per-layer table of a traced trial, rebuilt from its stored series."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import JsonOption, StoreOption
from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.store.trials import StoredTrial


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
    if depth is not None and depth < 0:
        raise UsageError("--depth", "must be 0 or more (0 = the whole model, 1 = its children, ...)")
    if sort not in ("order", "time"):
        raise UsageError("--sort", f"{sort!r} is not a row order; choose order or time")
    if top is not None and top < 1:
        raise UsageError("--top", "must be at least 1")
    from edgebench.measure.layers import layer_report
    from edgebench.store.trials import load_trial, power_series

    stored = load_trial(store, trial)
    result = stored.result
    if stored.spans is None and (result.cpu.perf_counters_run or result.cpu.perf_counters_per_step):
        return _step_counters(stored, as_json)  # a --command trial: counted per step and over its run, no layers
    if stored.spans is None:
        raise UsageError(
            "TRIAL",
            f"trial {result.trial_id} has no spans ({result.status}); record them with "
            f"`edgebench run --model {result.trial.model} --trace layers`",
        )
    deepest = max(stored.spans.depth, default=0)
    if depth is not None and depth > deepest:
        raise UsageError(
            "--depth",
            f"{depth} is deeper than this trial's model, whose deepest module is at depth {deepest}; "
            f"give 0 to {deepest}, or leave it out for every module",
        )
    power = power_series(stored, power_channel)
    peak = None
    if stored.spans.costs is not None:
        from edgebench.cli.peak import peak_for_trial
        from edgebench.store import Store
        from edgebench.store.sqlite import StoreUnusable

        try:
            db = Store(store)
        except StoreUnusable:  # read-only: show the stored peak, measure none (it could not be kept)
            db, no_measure = Store(store, read_only=True), True
        with db:
            peak = peak_for_trial(db, result, refresh=refresh_peak, measure_ok=not no_measure)
    report = layer_report(result, stored.spans, stored.events, stored.samples, power=power, peak=peak, depth=depth)
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        from edgebench.report.layers import print_layers

        print_layers(report, roofline=roofline, sort=sort, top=top)
    return 0


def _step_counters(stored: StoredTrial, as_json: bool) -> int:
    """``--counters`` of a trial without layer spans: its steps' counts and the whole run's."""
    import json

    from edgebench.records.events import Step
    from edgebench.report.layers import print_step_counters, step_counter_rows

    result = stored.result
    rows = step_counter_rows([e for e in stored.events if isinstance(e, Step)])
    if as_json:
        doc = {"trial_id": result.trial_id, "granularity": "steps", "steps": rows, "run": result.cpu.perf_counters_run}
        typer.echo(json.dumps(doc, indent=2))
        return 0
    what = result.trial.command or result.trial.model
    title = f"{what}  [{result.trial_id}]  perf counters per step (no layer spans: the command is one process tree)"
    print_step_counters(title, rows, result.cpu.perf_counters_run)
    for note in result.measurement_notes or []:
        if note.startswith("perf counters"):
            typer.echo(note)
    return 0
