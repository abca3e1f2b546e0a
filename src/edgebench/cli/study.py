"""``edgebench study tx2 | dnntune | mnn-suite``: re-run a source study on this device and say which findings hold.

The study's plan (scaled to the device and the budget) runs as every plan command's does (the launch path, stored
as a sweep, ``--resume`` continues the newest run of the same plan, ``--target`` any device); then each observation
gets a verdict from the stored trials, printed as a table, as JSON (``--json``: nothing else on stdout) and, with
``--html``, as an offline report.  The work is :mod:`edgebench.workflows.study`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import say, setting_option
from edgebench.cli.plans import PlanFlags, interrupted_line, plan_command
from edgebench.markup import rich_text

if TYPE_CHECKING:
    from edgebench.workflows.study import PlannedStudy

app = typer.Typer(
    help="Re-check a source study's observations on this device: holds, does not hold, or why not.",
    no_args_is_help=True,
)

QuickOption = Annotated[bool, typer.Option("--quick", help="A first look: small models, one repeat, a few steps.")]
BudgetOption = Annotated[
    str | None,
    typer.Option(help="Time the study may take, e.g. 30m (default: 30m; with --quick, the quick plan whole)."),
]
HtmlOption = Annotated[Path | None, typer.Option("--html", help="Also write the study's offline HTML report here.")]
SysfsOption = Annotated[
    Path | None, typer.Option("--sysfs-root", help="Read the device through this copy of /proc and /sys (tests).")
]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Print the planned trials and exit.")]
BackendSetting = setting_option("backend")


def run_study(
    name: str, quick: bool, budget: str | None, html: Path | None, sysfs_root_dir: Path | None, dry_run: bool,
    flags: PlanFlags, backend: str | None = None,
) -> int:  # fmt: skip
    """Plan the study (``--dry-run``: print the plan), run it, print its verdicts."""
    from rich.console import Console

    from edgebench.cli import fail
    from edgebench.workflows.study import StudyRequest, plan_study
    from edgebench.workflows.study import run_study as run
    from edgebench.workflows.views import verdict_table

    request = StudyRequest(name, quick, budget, html, sysfs_root_dir, backend, flags.options)
    planned = plan_study(request)
    if dry_run:
        return _print_plan(planned)
    outcome = run(planned, notify=say)
    if outcome.report is None:
        return fail(interrupted_line(outcome.run), 130)
    report, run_ = outcome.report, outcome.run
    if flags.as_json:
        typer.echo(report.model_dump_json(indent=2))
        return 0
    console = Console()
    console.print(verdict_table(report))
    counts = report.counts()
    console.print(rich_text(", ".join(f"{n} {k}" for k, n in counts.items()) + f"; sweep {run_.sweep_id}"
                            + (f" in {run_.store}" if run_.store else " (not stored)")), highlight=False)  # fmt: skip
    return 0


def _print_plan(planned: PlannedStudy) -> int:
    from edgebench.workflows.views import trial_label

    for note in planned.plan.notes:
        say(f"note: {note}")
    typer.echo(f"study {planned.request.name}: {len(planned.trials)} trials (about {planned.plan.estimate_s / 60:.1f} "
               f"min by the plan's rough estimate) on {planned.facts.describe()}")  # fmt: skip
    for p in planned.trials:
        typer.echo(f"  {p.position:>4}  {p.key}  {trial_label(p.trial)}")
    return 0


#: Each study's command and its help.
HELP = {
    "tx2": "The characterization paper's twelve observations on training (GPU, periodicity, cores, energy, memory, "
    "throughput) on this device.",
    "dnntune": "DNNTune's observations on deployment (CPU capacity, GPU, big+little cores, int8, partition points) on "
    "this device.",
    "mnn-suite": "The MNN suite's implied findings (core count, frequency, temperature, batch size) on this device.",
}


def command_for(name: str) -> Callable[..., int]:
    """The typer command of study ``name`` (one function per study, so each has its own help)."""

    @plan_command(placement=False)
    def command(
        quick: QuickOption = False,
        budget: BudgetOption = None,
        html: HtmlOption = None,
        sysfs_root_dir: SysfsOption = None,
        dry_run: DryRunOption = False,
        *,
        flags: PlanFlags,
        backend: BackendSetting = None,
    ) -> int:
        return run_study(name, quick, budget, html, sysfs_root_dir, dry_run, flags, backend)

    command.__doc__ = HELP[name]
    command.__name__ = f"study_{name.replace('-', '_')}"
    return command
