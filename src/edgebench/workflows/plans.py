"""Running a fixed plan of trials (``feasibility``, ``frameworks``, a study) as a sweep's trials run.

Each plan is a :class:`~edgebench.sweep.plan.Plan` run by the sweep's executor through the launch path, so it takes
the device the way ``run`` and ``sweep`` do (a target, a core role or set, a frequency, threads, a timeout, read by
the settings' own parsers), cools down between trials, checks the store before the first trial, keeps a trial the
store refuses in a rescue file, and resumes: every call is one run of its plan, stored as a sweep
``<command>-<plan hash>-<time>``, and ``resume`` runs what the newest run of the same plan has not stored.
"""

from __future__ import annotations

import contextlib
import json
import socket
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.config.settings import BY_FIELD, read_flag
from edgebench.errors import UsageError
from edgebench.records.result import TrialResult
from edgebench.records.trial import Trial, configuration_key
from edgebench.sweep.plan import Plan, PlannedTrial, default_sweep_id, with_repeats
from edgebench.targets import Target
from edgebench.workflows.common import Notify, placed, quiet

#: ``skip(planned, results so far by key)``: why a planned trial need not run (not stored), or None to run it.
Skip = Callable[[PlannedTrial, Mapping[str, TrialResult]], str | None]

#: The Trial fields a plan's placement options set, and the flag each is given by (an error names that flag).
PLACEMENT_FLAGS = {field: BY_FIELD[field].flag for field in ("cores", "freq_khz", "threads", "timeout_s", "repeats")}


@dataclass(frozen=True)
class PlanOptions:
    """Where and how a plan runs, shared by every plan workflow (and, as flags, by ``run`` and ``sweep``).

    The placement values are text, read by the settings' own parsers as the flags are (``cores="big"``,
    ``frequency="1.7GHz"``, ``timeout="10m"``); None leaves the setting to the trial's default.
    """

    target: str | None = None
    root: bool = False
    cores: str | None = None
    frequency: str | None = None
    threads: str | None = None
    timeout: str | None = None
    cooldown: str | None = None
    resume: bool = False
    store: Path | None = None
    no_store: bool = False
    #: How often each planned trial runs, each repeat a fresh worker process (text as ``--repeats``: 5, auto);
    #: None: the plan's own (1, or what a study plans).
    repeats: str | None = None

    def open_target(self, sysfs_root: str = "/") -> Target:
        from edgebench.targets import open_target

        return open_target(self.target, sysfs_root=sysfs_root, root=self.root or None)

    def trial_values(self, target: Target) -> dict[str, Any]:
        """The Trial values these options give; a core role (big, little, all) is resolved on ``target``."""
        given = {}
        for field, text in (("cores", self.cores), ("freq_khz", self.frequency), ("threads", self.threads),
                            ("timeout_s", self.timeout), ("repeats", self.repeats)):  # fmt: skip
            if text is not None:
                given[field] = read_flag(BY_FIELD[field], text)
        return placed(given, target)


@dataclass(frozen=True)
class PlanRun:
    """One run of a plan: its sweep id, the latest result of each planned key, and whether it was interrupted."""

    sweep_id: str
    #: The latest result of each planned key in this run of the plan (stored before a resume, or now).
    results: dict[str, TrialResult]
    interrupted: bool
    planned: int
    #: The store the trials are kept in (None with ``no_store``: they went to a temporary one, removed after).
    store: Path | None

    def repeats_of(self, trial: Trial) -> list[TrialResult]:
        """Every repeat of ``trial``'s configuration in this run (each key's latest result), in index order.  Found by
        the planned keys (:func:`~edgebench.sweep.plan.repeat_key`), not the results' trials: a launch fills in what
        the plan left to the device (its threads, its cores), which changes a result's own configuration key."""
        key = configuration_key(trial)
        found = [r for k, r in self.results.items() if k == key or k.startswith(f"{key}-r")]
        return sorted(found, key=lambda r: r.repeat.index if r.repeat is not None else 0)


def keyed(trials: list[Trial]) -> list[PlannedTrial]:
    """The plan's trials, each repeat with its stable key (a trial planned twice runs once, ``repeats`` times)."""
    return list(with_repeats(trials))


def run_plan(
    command: str,
    trials: list[PlannedTrial],
    options: PlanOptions,
    target: Target,
    *,
    config: dict[str, Any],
    on_result: Callable[[PlannedTrial, TrialResult], None] = lambda planned, result: None,
    skip: Skip | None = None,
    sample: bool = True,
    begin: Callable[[], None] = lambda: None,
    notify: Notify = quiet,
) -> PlanRun:
    """Run ``trials`` as one run of ``command``'s plan (or resume its newest run) and store each as it ends.

    ``on_result`` hears each result as it is stored (for progress lines); ``begin`` is called once the store and the
    device's controls have been checked, before the first trial; ``notify`` gets the resume line and the notes.
    """
    from edgebench.config.sweep_file import CooldownConfig, parse_cooldown
    from edgebench.launch.cooldown import Cooler
    from edgebench.launch.session import open_store
    from edgebench.sweep.execute import run_sweep

    plan_id = default_sweep_id(command, [p.key for p in trials])
    cooldown = CooldownConfig()
    if options.cooldown is not None:
        try:
            cooldown = parse_cooldown(options.cooldown)
        except ValueError as exc:
            raise UsageError("--cooldown", str(exc)) from None
    if options.no_store and options.resume:
        raise UsageError("--resume", "continues a run kept in a store; leave --no-store out")
    with _store_path(options) as path:
        db = open_store(path)  # checked page by page before the first trial
        assert db is not None
        with db:
            earlier = [s for s in db.sweep_ids() if s.startswith(plan_id + "-")]
            sweep_id = earlier[-1] if options.resume and earlier else f"{plan_id}-{time.strftime('%Y%m%d-%H%M%S')}"
            known = _latest(db.query(sweep_id=sweep_id))
            outcome = run_sweep(
                Plan(sweep_id, tuple(trials)),
                db,
                config_json=json.dumps({"command": command, "config": config}),
                cooler=Cooler(cooldown, target.sysfs()),
                resume=options.resume,
                target=target,
                reporter=_PlanReporter(known, on_result, begin, notify),
                host=socket.gethostname(),
                frequency_flag="--frequency",
                skip=None if skip is None else lambda planned: skip(planned, known),
                sample=sample,
            )
            results = _latest(db.query(sweep_id=sweep_id))
    return PlanRun(sweep_id, results, outcome.interrupted, len(trials), None if options.no_store else db.path)


@contextlib.contextmanager
def _store_path(options: PlanOptions) -> Iterator[Path | None]:
    """The store the plan runs against: ``store``, or with ``no_store`` one in a temporary folder, removed after
    (claims and resume need a store; nothing of it outlives the call)."""
    if not options.no_store:
        yield options.store
        return
    with tempfile.TemporaryDirectory(prefix="edgebench-plan-") as folder:
        yield Path(folder) / "plan.sqlite"


def _latest(results: list[TrialResult]) -> dict[str, TrialResult]:
    """Each sweep key's latest result (a key run again after a failure has two)."""
    return {r.sweep.trial_key: r for r in results if r.sweep is not None}


class _PlanReporter:
    """Tells the caller each result as it is stored (for its progress lines) and keeps them by key (for skips)."""

    def __init__(
        self,
        known: dict[str, TrialResult],
        on_result: Callable[[PlannedTrial, TrialResult], None],
        on_begin: Callable[[], None],
        notify: Notify,
    ) -> None:
        self.known = known
        self.on_result = on_result
        self.on_begin = on_begin
        self.notify = notify

    def begin(self, plan: Plan, todo: list[PlannedTrial], skipped: int) -> None:
        self.on_begin()
        if skipped:
            self.notify(f"resuming sweep {plan.sweep_id}: {skipped} trials already stored")

    def trial_started(self, planned: PlannedTrial, index: int) -> None:
        pass

    def trial_finished(self, planned: PlannedTrial, result: TrialResult) -> None:
        self.known[planned.key] = result
        self.on_result(planned, result)

    def status(self, text: str) -> None:
        pass

    def note(self, text: str) -> None:
        self.notify(f"note: {text}")
