"""``edgebench sweep CONFIG.yaml``: run a matrix of trials, each in its own worker, resumable, restoring the device.

The sweep is planned and run by :mod:`edgebench.workflows.sweep`; this module reads the flags and prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import ResumeOption, RootOption, StoreOption, TargetOption
from edgebench.markup import rich_text
from edgebench.workflows.sweep import SweepRequest

if TYPE_CHECKING:
    from rich.console import Console

    from edgebench.records.result import TrialResult
    from edgebench.workflows.sweep import PlannedSweep, SweepRun

SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="Set any key of the configuration: --set batch_sizes=[1,2,4] (values are YAML)."),
]


def sweep(
    config: Annotated[
        Path | None, typer.Argument(help="YAML configuration (native keys or DNNTune's sections); optional.")
    ] = None,
    set_: SetOption = None,
    resume: ResumeOption = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="With --resume, also rerun trials that were stored as failed.")
    ] = False,
    target_ci: Annotated[
        str | None, typer.Option(help="Shorthand for --set target_ci=...: step until the 95% CI is within it.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the planned trials and exit.")] = False,
    max_trials: Annotated[
        int, typer.Option(help="Refuse a grid larger than this, before planning it (default 10000).")
    ] = SweepRequest.max_trials,
    store: StoreOption = None,
    sysfs_root: Annotated[
        Path | None, typer.Option(help="Read and control the device through this copy of /proc and /sys (tests).")
    ] = None,
    executor: Annotated[
        str, typer.Option(help="Where trials run: local (this machine, one by one) or ray (a fleet, see `fleet join`).")
    ] = SweepRequest.executor,
    address: Annotated[
        str | None, typer.Option(help="With --executor ray: the cluster, auto (this host's) or HOST:PORT.")
    ] = None,
    target_spec: TargetOption = None,
    root: RootOption = False,
) -> int:
    """Sweep models x batch sizes x threads x core masks x CPU frequencies x precision; results land as trials end."""
    from rich.console import Console

    from edgebench.workflows.sweep import plan_sweep, run_sweep
    from edgebench.workflows.views import sweep_progress

    request = SweepRequest(config, tuple(set_ or []), target_ci, resume, retry_failed, max_trials, store, sysfs_root,
                           executor, address, target_spec, root)  # fmt: skip
    planned = plan_sweep(request)
    if planned.each_target:
        return _each_target(planned, dry_run)
    console = Console()
    for note in planned.notes:
        console.print(f"[dim]note: {rich_text(note)}[/dim]")
    if dry_run:
        for leg in planned.legs:
            console.print(rich_text(f"sweep {leg.plan.sweep_id}: {len(leg.plan.trials)} trials"))
            for p in leg.plan.trials:
                console.print(rich_text(f"  {p.position:>4}  {p.key}  {p.label}"))
            if leg.order_seed is not None:
                console.print(f"their repeats run interleaved in a random order (seed {leg.order_seed}, from the "
                              "sweep's id)")  # fmt: skip
        return 0
    with sweep_progress(console) as reporter:
        done = run_sweep(planned, reporter=reporter)
    return _report(console, planned, done)


def _report(console: Console, planned: PlannedSweep, done: SweepRun) -> int:
    """The interrupted line (exit 130) or each leg's table and best configurations, then the counts."""
    from edgebench.cli import fail

    if done.interrupted:
        left = done.planned - sum(map(len, done.stored))
        again = planned.request.resume_command()
        return fail(
            f"interrupted: {len(done.ran)} trials of this run are stored, {left} of {done.planned} remain; "
            f"`{again}` runs them",
            130,
        )
    for leg, records in zip(done.legs, done.stored, strict=True):
        _summarise(console, records, f"sweep {leg.plan.sweep_id} ({done.store})", leg.loaded.config.objective)
    also = f", {done.taken_elsewhere} run by another sweep at the same time" if done.taken_elsewhere else ""
    console.print(f"{len(done.ran)} trials run, {done.skipped} already stored{also}, {len(done.failed)} failed")
    if done.failed:
        return fail(f"{len(done.failed)} of {len(done.ran)} trials failed (stored with their reason)", 1)
    return 0


def _summarise(console: Console, stored: list[TrialResult], title: str, objective: str) -> None:
    """A sweep's table and the best configuration of each model for its objective."""
    from edgebench.report.sweep_summary import best_per_model, sweep_table
    from edgebench.report.warnings import hygiene_warnings
    from edgebench.workflows.views import trial_label

    console.print(sweep_table(stored, title))
    for line in hygiene_warnings(stored):
        console.print(line, highlight=False, markup=False)
    best = best_per_model(stored, objective, lambda r: trial_label(r.trial, r.applied_freq_khz))
    for pick in best.values():
        console.print(pick.line, highlight=False, markup=False)
    if objective == "energy-first" and not best:
        console.print("energy-first: no trial has an energy figure (this device has no power sensor)")


def _each_target(planned: PlannedSweep, dry_run: bool) -> int:
    """A ``targets:`` axis on this machine: one sweep process per device, their lines prefixed with the target."""
    from edgebench.cli import fail
    from edgebench.workflows.sweep import sweep_each_target

    codes = sweep_each_target(planned, dry_run=dry_run, on_line=lambda spec, line: typer.echo(f"[{spec}] {line}"))
    failed = {spec: code for spec, code in codes.items() if code}
    if failed:
        listed = ", ".join(f"{spec} (exit {code})" for spec, code in failed.items())
        return fail(f"the sweep failed on {listed}; see its lines above", max(failed.values()))
    return 0
