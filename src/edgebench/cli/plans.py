"""Commands whose trials form a fixed plan (``feasibility``, ``frameworks``), run as a sweep's are.

Each is a :class:`~edgebench.sweep.plan.Plan` run by the sweep's executor through the launch path, so it takes the
device the way ``run`` and ``sweep`` do (``--target``, ``--cores big|little|all``, ``--frequency``, ``--threads``,
``--timeout``, read by the settings' own parsers), cools down between trials, checks the store before the first
trial, keeps a trial the store refuses in a rescue file, and resumes: every invocation is one run of its plan,
stored as a sweep ``<command>-<plan hash>-<time>``, and ``--resume`` runs what the newest run of the same plan
has not stored.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.config.settings import BY_FIELD, read_flag
from edgebench.errors import UsageError
from edgebench.records.result import TrialResult
from edgebench.records.trial import Trial
from edgebench.sweep.plan import Plan, PlannedTrial, default_sweep_id, trial_key
from edgebench.targets import Target

#: ``skip(planned, results so far by key)``: why a planned trial need not run (not stored), or None to run it.
Skip = Callable[[PlannedTrial, Mapping[str, TrialResult]], str | None]


@dataclass(frozen=True)
class PlanFlags:
    """The options a plan command shares with ``run`` and ``sweep`` (declared once in :mod:`edgebench.cli.options`)."""

    target: str | None
    root: bool
    cores: str | None
    frequency: str | None
    threads: str | None
    timeout: str | None
    cooldown: str | None
    resume: bool
    store: Path | None
    no_store: bool

    def open_target(self) -> Target:
        from edgebench.targets import open_target

        return open_target(self.target, root=self.root or None)

    def trial_values(self, target: Target) -> dict[str, Any]:
        """The Trial values these flags give; a core role (big, little, all) is resolved on ``target``."""
        from edgebench.cli.options import role_cores

        given = {}
        for field, text in (("cores", self.cores), ("freq_khz", self.frequency), ("threads", self.threads),
                            ("timeout_s", self.timeout)):  # fmt: skip
            if text is not None:
                given[field] = read_flag(BY_FIELD[field], text)
        if isinstance(given.get("cores"), str):
            given["cores"] = role_cores(given["cores"], target)
        if getattr(given.get("cores"), "text", None):  # a hex mask: its typed text names the MNN suite's folders
            given["cores_mask"] = given["cores"].text
        if given.get("freq_khz") == "all":
            raise UsageError("--frequency", "all is for a sweep's frequencies axis; give one frequency, e.g. 1.7GHz")
        return given


@dataclass(frozen=True)
class PlanRun:
    sweep_id: str
    #: The latest result of each planned key in this run of the plan (stored before a resume, or now).
    results: dict[str, TrialResult]
    interrupted: bool
    planned: int
    store: Path | None


def keyed(trials: list[Trial]) -> list[PlannedTrial]:
    """The plan's trials, each with its stable key (a trial planned twice runs once)."""
    planned: dict[str, PlannedTrial] = {}
    for trial in trials:
        key = trial_key(trial)
        planned.setdefault(key, PlannedTrial(key, len(planned), trial))
    return list(planned.values())


def run_plan(
    command: str,
    trials: list[PlannedTrial],
    flags: PlanFlags,
    target: Target,
    *,
    config: dict[str, Any],
    on_result: Callable[[PlannedTrial, TrialResult], None],
    skip: Skip | None = None,
    sample: bool = True,
    begin: Callable[[], None] = lambda: None,
) -> PlanRun:
    """Run ``trials`` as one run of ``command``'s plan (or resume its newest run) and store each as it ends;
    ``begin`` is called once the store and the device's controls have been checked, before the first trial."""
    from edgebench.config.sweep_file import CooldownConfig, parse_cooldown
    from edgebench.launch.cooldown import Cooler
    from edgebench.launch.session import open_store
    from edgebench.sweep.execute import run_sweep

    plan_id = default_sweep_id(command, [p.key for p in trials])
    cooldown = CooldownConfig()
    if flags.cooldown is not None:
        try:
            cooldown = parse_cooldown(flags.cooldown)
        except ValueError as exc:
            raise UsageError("--cooldown", str(exc)) from None
    if flags.no_store and flags.resume:
        raise UsageError("--resume", "continues a run kept in a store; leave --no-store out")
    with _store_path(flags) as path:
        db = open_store(path)  # checked page by page before the first trial
        assert db is not None
        with db:
            earlier = [s for s in db.sweep_ids() if s.startswith(plan_id + "-")]
            sweep_id = earlier[-1] if flags.resume and earlier else f"{plan_id}-{time.strftime('%Y%m%d-%H%M%S')}"
            known = _latest(db.query(sweep_id=sweep_id))
            plan = Plan(sweep_id, tuple(trials))
            reporter = _PlanReporter(known, on_result, begin)
            outcome = run_sweep(
                plan,
                db,
                config_json=json.dumps({"command": command, "config": config}),
                cooler=Cooler(cooldown, target.sysfs()),
                resume=flags.resume,
                target=target,
                reporter=reporter,
                host=socket.gethostname(),
                frequency_flag="--frequency",
                skip=None if skip is None else lambda planned: skip(planned, known),
                sample=sample,
            )
            results = _latest(db.query(sweep_id=sweep_id))
    return PlanRun(sweep_id, results, outcome.interrupted, len(trials), None if flags.no_store else db.path)


def interrupted_line(run: PlanRun) -> str:
    """What an interrupted plan command prints (exit 130): what is stored and how to run the rest."""
    if run.store is None:
        return "interrupted (with --no-store nothing was kept)"
    return (
        f"interrupted: {len(run.results)} of {run.planned} trials are stored in {run.store} (sweep {run.sweep_id}); "
        "the same command with --resume runs the rest"
    )


@contextlib.contextmanager
def _store_path(flags: PlanFlags) -> Iterator[Path | None]:
    """The store the plan runs against: ``--store``, or with ``--no-store`` one in a temporary folder, removed after
    (claims and resume need a store; nothing of it outlives the command)."""
    if not flags.no_store:
        yield flags.store
        return
    with tempfile.TemporaryDirectory(prefix="edgebench-plan-") as folder:
        yield Path(folder) / "plan.sqlite"


def _latest(results: list[TrialResult]) -> dict[str, TrialResult]:
    """Each sweep key's latest result (a key run again after a failure has two)."""
    return {r.sweep.trial_key: r for r in results if r.sweep is not None}


class _PlanReporter:
    """Tells the command each result as it is stored (for its progress lines) and keeps them by key (for skips)."""

    def __init__(
        self,
        known: dict[str, TrialResult],
        on_result: Callable[[PlannedTrial, TrialResult], None],
        on_begin: Callable[[], None],
    ) -> None:
        self.known = known
        self.on_result = on_result
        self.on_begin = on_begin

    def begin(self, plan: Plan, todo: list[PlannedTrial], skipped: int) -> None:
        self.on_begin()
        if skipped:
            print(f"resuming sweep {plan.sweep_id}: {skipped} trials already stored", file=sys.stderr, flush=True)

    def trial_started(self, planned: PlannedTrial, index: int) -> None:
        pass

    def trial_finished(self, planned: PlannedTrial, result: TrialResult) -> None:
        self.known[planned.key] = result
        self.on_result(planned, result)

    def status(self, text: str) -> None:
        pass

    def note(self, text: str) -> None:
        print(f"note: {text}", file=sys.stderr, flush=True)
