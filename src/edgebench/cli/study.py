"""``edgebench study tx2 | dnntune | mnn-suite``: re-run a source study on this device and say which findings hold.

The study's plan (scaled to the device and the budget) runs as every plan command's does (:func:`run_plan`: the
launch path, stored as a sweep, ``--resume`` continues the newest run of the same plan, ``--target`` any device);
then each observation gets a verdict from the stored trials, printed as a table, as JSON (``--json``: nothing else
on stdout) and, with ``--html``, as an offline report.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from edgebench.cli.options import (
    CooldownOption,
    JsonOption,
    NoStoreOption,
    ResumeOption,
    RootOption,
    StoreOption,
    TargetOption,
    setting_option,
)
from edgebench.markup import rich_text

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult
    from edgebench.sweep.plan import PlannedTrial

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
DEFAULT_BUDGET = "30m"
BackendSetting = setting_option("backend")


def run_study(
    name: str, quick: bool, budget: str | None, html: Path | None, sysfs_root_dir: Path | None, dry_run: bool,
    cooldown: str | None, resume: bool, target_spec: str | None, root: bool, as_json: bool, store: Path | None,
    no_store: bool, backend: str | None = None,
) -> int:  # fmt: skip
    from edgebench.cli import fail
    from edgebench.cli.options import parse, sysfs_root
    from edgebench.cli.plans import PlanFlags, interrupted_line, keyed, run_plan
    from edgebench.study.device import probe
    from edgebench.study.studies import get_study
    from edgebench.targets import open_target
    from edgebench.units import parse_duration_s

    study = get_study(name)
    budget_s = parse("--budget", budget if budget is not None else (None if quick else DEFAULT_BUDGET),
                     parse_duration_s)  # fmt: skip
    if budget_s is not None and budget_s <= 0:
        from edgebench.errors import UsageError

        raise UsageError("--budget", "must be above 0, e.g. 30m")
    if html is not None:
        from edgebench.report.outputs import check_output_file

        check_output_file("--html", html, "study.html")
    target = open_target(target_spec, sysfs_root=sysfs_root(sysfs_root_dir), root=root or None)
    facts = probe(target)
    planned_study = study.plan(facts, quick=quick, budget_s=budget_s)
    flags = PlanFlags(target_spec, root, None, None, None, None, cooldown, resume, store, no_store)
    trials = _trials(planned_study, backend)
    planned = keyed(trials)

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def begin() -> None:  # once the store and the device's controls are checked: a refusal stays one line
        for note in planned_study.notes:
            say(f"note: {note}")
        say(f"study {name}: {len(planned)} trials on {facts.describe()}")

    if dry_run:
        for note in planned_study.notes:
            say(f"note: {note}")
        from edgebench.sweep.plan import trial_label

        typer.echo(f"study {name}: {len(planned)} trials (about {planned_study.estimate_s / 60:.1f} min by the "
                   f"plan's rough estimate) on {facts.describe()}")  # fmt: skip
        for p in planned:
            typer.echo(f"  {p.position:>4}  {p.key}  {trial_label(p.trial)}")
        return 0

    def on_result(p: PlannedTrial, r: TrialResult) -> None:
        from edgebench.sweep.plan import trial_label

        say(f"  {trial_label(p.trial)}: {r.status}" + (f" ({r.reason})" if r.reason and not r.ok else ""))

    run = run_plan(f"study-{name}", planned, flags, target, config={"study": name, "quick": quick,
                   "budget_s": budget_s}, on_result=on_result, begin=begin)  # fmt: skip
    if run.interrupted:
        return fail(interrupted_line(run), 130)
    from edgebench.study.report import make_report, table

    results = list(run.results.values())
    with _stored(run.store) as db:
        report = make_report(study, results, sweep_id=run.sweep_id, store=str(run.store) if run.store else None,
                             device=facts.describe(), notes=planned_study.notes, db=db)  # fmt: skip
        if html is not None:
            _write_html(study, report, results, db, html)
            say(f"report: {html}")
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return 0
    from rich.console import Console

    console = Console()
    console.print(table(report))
    counts = report.counts()
    console.print(rich_text(", ".join(f"{n} {k}" for k, n in counts.items()) + f"; sweep {run.sweep_id}"
                            + (f" in {run.store}" if run.store else " (not stored)")), highlight=False)  # fmt: skip
    return 0


def _trials(planned: Any, backend: str | None) -> list[Any]:
    """The plan's Trials; with ``--backend``, a planned trial that backend cannot run (int8 on a backend without
    it, a layer trace) is left out with a note, and the study goes on with the rest."""
    from edgebench.cli.options import build
    from edgebench.config.trial import make_trial
    from edgebench.errors import UsageError

    trials = []
    for values in planned.trials:
        try:
            trials.append(build(make_trial, {**values, **({"backend": backend} if backend else {})}, {}))
        except UsageError as exc:
            if backend is None or exc.field == "--backend":
                raise
            planned.notes.append(f"{values['model']} ({exc.field.lstrip('-')}) left out: {exc.message}")
    if not trials:
        raise UsageError("--backend", f"{backend} can run none of this study's trials; leave --backend out")
    return trials


@contextlib.contextmanager
def _stored(path: Path | None) -> Iterator[Any]:
    """The store the plan ran on, read-only, for the checks and views that read series; None with --no-store."""
    if path is None:
        yield None
        return
    from edgebench.store import Store

    with Store(path, read_only=True) as db:
        yield db


def _write_html(study, report, results, db, html: Path) -> None:  # type: ignore[no-untyped-def]
    from edgebench.host.files import write_text_replacing
    from edgebench.report.html import render_html
    from edgebench.study.report import html_content

    write_text_replacing(html, render_html(html_content(study, report, results, db), f"edgebench study {study.name}"))


#: Each study's command and its help.
HELP = {
    "tx2": "The characterization paper's twelve observations on training (GPU, periodicity, cores, energy, memory, "
    "throughput) on this device.",
    "dnntune": "DNNTune's observations on deployment (CPU capacity, GPU, big+little cores, int8, partition points) on "
    "this device.",
    "mnn-suite": "The MNN suite's implied findings (core count, frequency, temperature, batch size) on this device.",
}


def command_for(name: str):  # type: ignore[no-untyped-def]
    """The typer command of study ``name`` (one function per study, so each has its own help)."""

    def command(
        quick: QuickOption = False,
        budget: BudgetOption = None,
        html: HtmlOption = None,
        sysfs_root_dir: SysfsOption = None,
        dry_run: DryRunOption = False,
        cooldown: CooldownOption = None,
        resume: ResumeOption = False,
        target_spec: TargetOption = None,
        root: RootOption = False,
        as_json: JsonOption = False,
        store: StoreOption = None,
        no_store: NoStoreOption = False,
        backend: BackendSetting = None,
    ) -> int:
        return run_study(name, quick, budget, html, sysfs_root_dir, dry_run, cooldown, resume, target_spec, root,
                         as_json, store, no_store, backend)  # fmt: skip

    command.__doc__ = HELP[name]
    command.__name__ = f"study_{name.replace('-', '_')}"
    return command
