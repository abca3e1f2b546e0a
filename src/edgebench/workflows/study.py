"""Re-checking a source study on the user's device: its plan, scaled to the device and a time budget, run as every
plan is (stored as a sweep, resumable, on any target); then each of the study's observations gets a verdict from
the stored trials (holds, does not hold, inconclusive, or why it cannot be checked here), optionally as an offline
HTML report."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.workflows.common import Notify, quiet
from edgebench.workflows.plans import PlanOptions, PlanRun

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult
    from edgebench.records.trial import Trial
    from edgebench.study.device import DeviceFacts
    from edgebench.study.plan import StudyPlan
    from edgebench.study.records import StudyReport
    from edgebench.study.studies import Study
    from edgebench.sweep.plan import PlannedTrial
    from edgebench.targets import Target

#: A study's time budget when none is given (a ``quick`` study runs its quick plan whole).
DEFAULT_BUDGET = "30m"


@dataclass(frozen=True)
class StudyRequest:
    """The study (``tx2``, ``dnntune``, ``mnn-suite``), its size (``quick``, a budget in seconds or as text such as
    ``30m``), where its HTML report goes, the device tree to read, a backend for every trial, and the plan's
    options (device, cool-down, resume, store; the study places its trials itself)."""

    name: str
    quick: bool = False
    budget: float | str | None = None
    html: Path | None = None
    sysfs_root: Path | None = None
    backend: str | None = None
    options: PlanOptions = field(default_factory=PlanOptions)


@dataclass(frozen=True)
class PlannedStudy:
    """The study's plan on this device: the device's facts, the plan (its notes and rough time estimate) and the
    planned trials, ready to run with :func:`run_study`."""

    request: StudyRequest
    study: Study
    facts: DeviceFacts
    plan: StudyPlan
    trials: list[PlannedTrial]
    budget_s: float | None
    target: Target


@dataclass(frozen=True)
class StudyOutcome:
    """The verdicts (``report``; None when the run was interrupted) and the plan's run."""

    report: StudyReport | None
    run: PlanRun


def plan_study(request: StudyRequest) -> PlannedStudy:
    """Probe the device and plan the study for it; every input is checked here, before anything runs."""
    from edgebench.config.flags import parse, sysfs_root
    from edgebench.errors import UsageError
    from edgebench.study.device import probe
    from edgebench.study.studies import get_study
    from edgebench.units import parse_duration_s
    from edgebench.workflows.plans import keyed

    study = get_study(request.name)
    budget = request.budget if request.budget is not None else (None if request.quick else DEFAULT_BUDGET)
    budget_s = parse("--budget", budget, parse_duration_s) if isinstance(budget, str) else budget
    if budget_s is not None and budget_s <= 0:
        raise UsageError("--budget", "must be above 0, e.g. 30m")
    if request.html is not None:
        from edgebench.report.outputs import check_output_file

        check_output_file("--html", request.html, "study.html")
    target = request.options.open_target(sysfs_root(request.sysfs_root))
    facts = probe(target)
    planned = study.plan(facts, quick=request.quick, budget_s=budget_s)
    trials = keyed(_trials(planned, request.backend, request.options.repeats))
    return PlannedStudy(request, study, facts, planned, trials, budget_s, target)


def run_study(planned: PlannedStudy, *, notify: Notify = quiet) -> StudyOutcome:
    """Run the planned trials (or resume the newest run of the same plan), then judge every observation from them
    and, where asked, write the HTML report.  ``notify`` hears the plan's notes, a line per trial and the report's
    path."""
    from edgebench.study.report import make_report
    from edgebench.sweep.plan import trial_label
    from edgebench.workflows.plans import run_plan

    request, study = planned.request, planned.study

    def begin() -> None:  # once the store and the device's controls are checked: a refusal stays one line
        for note in planned.plan.notes:
            notify(f"note: {note}")
        notify(f"study {request.name}: {len(planned.trials)} trials on {planned.facts.describe()}")

    def on_result(p: PlannedTrial, r: TrialResult) -> None:
        notify(f"  {trial_label(p.trial)}: {r.status}" + (f" ({r.reason})" if r.reason and not r.ok else ""))

    config = {"study": request.name, "quick": request.quick, "budget_s": planned.budget_s}
    run = run_plan(f"study-{request.name}", planned.trials, request.options, planned.target, config=config,
                   on_result=on_result, begin=begin, notify=notify)  # fmt: skip
    if run.interrupted:
        return StudyOutcome(None, run)
    results = list(run.results.values())
    with _stored(run.store) as db:
        report = make_report(study, results, sweep_id=run.sweep_id, store=str(run.store) if run.store else None,
                             device=planned.facts.describe(), notes=planned.plan.notes, db=db)  # fmt: skip
        if request.html is not None:
            _write_html(study, report, results, db, request.html)
            notify(f"report: {request.html}")
    return StudyOutcome(report, run)


def _trials(planned: StudyPlan, backend: str | None, repeats: str | None = None) -> list[Trial]:
    """The plan's Trials; with ``backend``, a planned trial that backend cannot run (int8 on a backend without
    it, a layer trace) is left out with a note, and the study goes on with the rest; ``repeats`` (``--repeats``)
    runs each configuration the study repeats that many times instead of the plan's own count."""
    from edgebench.config.flags import build
    from edgebench.config.settings import BY_FIELD, read_flag
    from edgebench.config.trial import make_trial
    from edgebench.errors import UsageError

    trials = []
    count = {"repeats": read_flag(BY_FIELD["repeats"], repeats)} if repeats is not None else {}
    for values in planned.trials:
        given = {**values, **({"backend": backend} if backend else {})}
        if count and given.get("repeats", 1) != 1:
            given.update(count)
        try:
            trials.append(build(make_trial, given, {}))
        except UsageError as exc:
            if backend is None or exc.field == "--backend":
                raise
            planned.notes.append(f"{values['model']} ({exc.field.lstrip('-')}) left out: {exc.message}")
    if not trials:
        raise UsageError("--backend", f"{backend} can run none of this study's trials; leave --backend out")
    return trials


@contextlib.contextmanager
def _stored(path: Path | None) -> Iterator[Any]:
    """The store the plan ran on, read-only, for the checks and views that read series; None with no store."""
    if path is None:
        yield None
        return
    from edgebench.store import Store

    with Store(path, read_only=True) as db:
        yield db


def _write_html(study: Study, report: StudyReport, results: list[TrialResult], db: Any, html: Path) -> None:
    from edgebench.host.files import write_text_replacing
    from edgebench.report.html import render_html
    from edgebench.study.report import html_content

    write_text_replacing(html, render_html(html_content(study, report, results, db), f"edgebench study {study.name}"))
