"""The one sweep runner: which planned trial runs when and where, for every executor.

Every executor hands its sweeps (``legs``: one per sweep, several for a ``targets:`` axis on a fleet) to
:func:`run_legs` with a :class:`PlacementStrategy` that runs a trial somewhere: :class:`LocalPlacement` on this
machine's launcher, one at a time, or the Ray placement (:mod:`edgebench.fleet.raycluster`), one task per free
device of a cluster.  Everything else lives here, once:

* **order**: a plan whose configurations run several repeats runs them interleaved in a random order (as Google
  Benchmark's ``--benchmark_enable_random_interleaving``), so a slow drift of the device (heat, a neighbour's load)
  spreads over every configuration instead of landing on those that ran last.  The seed comes from the sweep's id
  (:func:`order_seed`) and is stored with each repeat, so the order can be told again and a resumed sweep keeps it;
  a plan of one repeat each keeps its own order (core set, then frequency: the clock changes as rarely as possible);
* **auto repeats** (``repeats: auto``): once every planned repeat has run, each such configuration gets as many more
  as its measured run-to-run spread asks for (:func:`~edgebench.measure.repeats.repeats_needed`), round after
  round, up to :data:`~edgebench.measure.repeats.AUTO_MAX`; a disturbed repeat does not count, a failed one stops
  its configuration's rounds;
* **each trial** is claimed in the store, cools its slot first when the sweep's rule says so after what that slot
  ran last, is handed its launch context (sweep, key, position, repeat: :class:`~edgebench.records.launch.
  LaunchContext`), so its result is whole when it is made, and is stored as it ends (:class:`~edgebench.sweep.
  execute.SweepLedger`).
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from edgebench.config.sweep_file import CooldownConfig
from edgebench.launch.cooldown import cools_between
from edgebench.launch.session import Launcher
from edgebench.measure.repeats import AUTO_MAX, repeat_value, repeats_needed
from edgebench.measure.trust import disturbances
from edgebench.records.finished import FinishedTrial
from edgebench.records.launch import LaunchContext
from edgebench.records.result import Repeat, SweepInfo, TrialResult
from edgebench.records.trial import Trial
from edgebench.store import Store
from edgebench.store.rescue import save_or_keep
from edgebench.store.sqlite import Claimant
from edgebench.sweep.plan import AUTO_PILOT, Plan, PlannedTrial, planned_repeats, repeat_key


@dataclass(frozen=True)
class Slot:
    """Where one trial at a time runs: this machine's target, or one device of a fleet (``host`` runs it;
    ``device``: the strategy's own record of it, a fleet's :class:`~edgebench.fleet.devices.Device`)."""

    name: str
    host: str | None = None
    device: Any = None


@dataclass(eq=False)
class Leg:
    """One sweep of a run: its ledger (plan, store, reporter, outcome), what is left to run, which slots may run
    its trials (None: any) and why a planned trial need not run (``skip``, or None)."""

    ledger: SweepLedger
    todo: list[PlannedTrial]
    accepts: Callable[[Slot], bool] | None = None
    #: The slots this leg runs on, in the words of a note (``device pixel``).
    where: str = "its device"
    skip: Callable[[PlannedTrial], str | None] | None = None
    #: Repeats planned so far per configuration key (the plan's, then what auto added), and how many auto added.
    planned: dict[str, int] = field(default_factory=dict)
    added: int = 0

    @property
    def plan(self) -> Plan:
        return self.ledger.plan


@dataclass(frozen=True)
class Start:
    """A claimed trial handed to the placement: the slot it runs on, whether the slot cools down first, its launch
    context, and how many trials this run started before it (for progress)."""

    leg: Leg
    planned: PlannedTrial
    slot: Slot
    cool_first: bool
    context: LaunchContext
    index: int


@dataclass(frozen=True)
class Ended:
    """A started trial, finished (a trial that never came back is a failed result with the reason)."""

    start: Start
    finished: FinishedTrial


class PlacementStrategy(Protocol):
    """Where the runner's trials run.  ``free``: the slots that can start a trial now, the longest idle first;
    ``start``: run one there (at once, or as a task to wait for); ``busy``: whether any started trial has not been
    handed back; ``wait``: the trials that ended since (waiting for one at least while any runs), ``queued`` being
    what still waits to start (a fleet publishes it)."""

    def free(self) -> list[Slot]: ...
    def start(self, start: Start) -> None: ...
    def busy(self) -> bool: ...
    def wait(self, queued: list[tuple[Leg, PlannedTrial]]) -> list[Ended]: ...


class Reporter(Protocol):
    """What the sweep tells its user (a progress bar on a terminal; nothing in tests).  ``grew``: ``repeats: auto``
    added these repeats, as ``note`` says why."""

    def begin(self, plan: Plan, todo: list[PlannedTrial], skipped: int) -> None: ...
    def grew(self, added: list[PlannedTrial]) -> None: ...
    def trial_started(self, planned: PlannedTrial, index: int) -> None: ...
    def trial_finished(self, planned: PlannedTrial, result: TrialResult) -> None: ...
    def status(self, text: str) -> None: ...
    def note(self, text: str) -> None: ...


class SilentReporter:
    def begin(self, plan: Plan, todo: list[PlannedTrial], skipped: int) -> None:
        pass

    def grew(self, added: list[PlannedTrial]) -> None:
        pass

    def trial_started(self, planned: PlannedTrial, index: int) -> None:
        pass

    def trial_finished(self, planned: PlannedTrial, result: TrialResult) -> None:
        pass

    def status(self, text: str) -> None:
        pass

    def note(self, text: str) -> None:
        pass


@dataclass
class SweepOutcome:
    plan: Plan
    results: list[TrialResult] = field(default_factory=list)
    skipped: int = 0
    interrupted: bool = False
    #: Planned trials another sweep run took first (two launchers running this sweep on one store at once).
    taken_elsewhere: int = 0

    @property
    def failed(self) -> list[TrialResult]:
        return [r for r in self.results if not r.ok]


@dataclass
class SweepLedger:
    """One sweep's bookkeeping on the driver (its store's only writer), whichever loop places its trials.

    Each planned trial is claimed in the store before it runs (two launchers of one sweep share its trials), cools
    its device first when the sweep's rule says so after what that device ran last, and is stored with its place
    in the sweep (:class:`~edgebench.records.result.SweepInfo`), added to the outcome and reported as it ends."""

    plan: Plan
    store: Store
    reporter: Reporter
    cooldown: CooldownConfig
    claimant: Claimant
    outcome: SweepOutcome
    retry_failed: bool = False

    def claim(self, planned: PlannedTrial) -> bool:
        """Claim ``planned`` for this run; False when another launcher of this sweep got it first (or stored it
        meanwhile): it is then noted and counted, not run."""
        taken = self.store.claim(self.plan.sweep_id, planned.key, self.claimant, retry_failed=self.retry_failed)
        if taken is None:
            return True
        self.reporter.note(f"trial {planned.key} ({planned.label}) skipped: {taken}")
        self.outcome.taken_elsewhere += 1
        return False

    def cools_first(self, previous: Trial | None, upcoming: Trial) -> bool:
        """Whether the device cools down before ``upcoming``, after ``previous`` (what it ran last in this sweep;
        None: nothing yet)."""
        return previous is not None and cools_between(self.cooldown, previous, upcoming)

    def record(self, planned: PlannedTrial, finished: FinishedTrial) -> TrialResult:
        """Store ``finished`` (its result made with its place in the sweep; a failing store keeps it in a rescue
        file and raises), add it to the outcome and report it."""
        save_or_keep(self.store, finished)
        result = finished.result
        self.outcome.results.append(result)
        self.reporter.trial_finished(planned, result)
        return result

    def stored(self) -> list[TrialResult]:
        """What the store holds of this sweep: this run's trials and those stored before a resume."""
        return self.store.query(sweep_id=self.plan.sweep_id)

    def grew(self, added: list[PlannedTrial]) -> None:
        """``repeats: auto`` added ``added`` to the sweep: the store's planned count and the reporter hear it."""
        self.store.grow_sweep(self.plan.sweep_id, len(added))
        by_label: dict[str, int] = {}
        for p in added:
            by_label[p.label.rsplit(" #", 1)[0]] = by_label.get(p.label.rsplit(" #", 1)[0], 0) + 1
        for label, n in by_label.items():
            self.reporter.note(f"repeats auto: {label}: {n} more repeats, for the spread its repeats show so far")
        self.reporter.grew(added)

    def release(self) -> None:
        """Give back the claims this run still holds (a claim left behind is taken over: its process is gone)."""
        with contextlib.suppress(sqlite3.Error):
            self.store.release_claims(self.claimant)


def order_seed(plan: Plan) -> int | None:
    """The seed of the plan's interleaved order (from its sweep id, so a resumed sweep keeps its order), or None
    when there is nothing to interleave: one configuration, or one repeat of each."""
    configurations = {p.config_key for p in plan.trials}
    if len(configurations) < 2 or all(p.trial.repeats == 1 for p in plan.trials):
        return None
    return int(hashlib.sha256(plan.sweep_id.encode()).hexdigest()[:8], 16)


def run_order(plan: Plan, todo: list[PlannedTrial]) -> list[PlannedTrial]:
    """``todo`` in the order it runs: the plan's own, or the seeded random interleaving of every repeat."""
    seed = order_seed(plan)
    if seed is None:
        return list(todo)
    shuffled = list(plan.trials)
    random.Random(seed).shuffle(shuffled)
    rank = {p.key: i for i, p in enumerate(shuffled)}
    return sorted(todo, key=lambda p: rank.get(p.key, len(rank) + p.position))


def run_legs(legs: list[Leg], placement: PlacementStrategy) -> None:
    """Run what every leg has left through ``placement`` (see the module's docstring), each trial stored as it ends;
    a KeyboardInterrupt propagates to the executor, which cancels and releases."""
    for leg in legs:
        leg.planned = _planned_counts(leg)
    queue = [(leg, p) for leg in legs for p in run_order(leg.plan, leg.todo)]
    previous: dict[str, Trial] = {}
    started = 0
    while True:
        for slot in placement.free():
            while entry := next(((leg, p) for leg, p in queue if leg.accepts is None or leg.accepts(slot)), None):
                queue.remove(entry)
                leg, planned = entry
                if leg.skip is not None and leg.skip(planned) is not None:
                    continue
                if not leg.ledger.claim(planned):  # another launcher of this sweep got it first
                    continue
                placement.start(_start(leg, planned, slot, previous.get(slot.name), started))
                started += 1
                break
        if not placement.busy():
            if queue:  # trials no slot accepts: their devices left
                _stranded(legs, queue)
                return
            queue = [(leg, p) for leg in legs for p in run_order(leg.plan, _more_repeats(leg))]
            if not queue:
                return
            continue
        for ended in placement.wait(queue):
            start = ended.start
            start.leg.ledger.record(start.planned, ended.finished)
            previous[start.slot.name] = start.planned.trial


def _start(leg: Leg, planned: PlannedTrial, slot: Slot, previous: Trial | None, index: int) -> Start:
    """What the placement runs: the trial, whether its slot cools first, and the context its result records."""
    ledger = leg.ledger
    sweep = SweepInfo(
        sweep_id=leg.plan.sweep_id,
        host=slot.host,
        trial_key=planned.key,
        position=planned.position,
        # "none" until the launcher cools: the sweep's rule was asked and said no cool-down was needed
        cooldown_by="none" if ledger.cooldown.enabled and previous is not None else None,
    )
    repeat = None
    if planned.trial.repeats != 1:
        repeat = Repeat(config_key=planned.config_key, index=planned.repeat, order_seed=order_seed(leg.plan),
                        planned=leg.planned.get(planned.config_key, planned_repeats(planned.trial)))  # fmt: skip
    context = LaunchContext(sweep=sweep, repeat=repeat)
    return Start(leg, planned, slot, ledger.cools_first(previous, planned.trial), context, index)


def _planned_counts(leg: Leg) -> dict[str, int]:
    """Repeats planned per configuration: the plan's, or more where an earlier run of an auto sweep added some."""
    counts: dict[str, int] = {}
    for p in leg.plan.trials:
        counts[p.config_key] = max(counts.get(p.config_key, 0), p.repeat + 1)
    if any(p.trial.repeats == "auto" for p in leg.plan.trials):
        for r in leg.ledger.stored():
            if r.repeat is not None and r.repeat.config_key in counts:
                counts[r.repeat.config_key] = max(counts[r.repeat.config_key], r.repeat.index + 1)
    return counts


def _more_repeats(leg: Leg) -> list[PlannedTrial]:
    """``repeats: auto``: for each such configuration, the repeats its spread still asks for (none once reached,
    at the cap, or after a failed repeat), as planned trials of new keys; the reporter hears how many and why."""
    autos = {p.config_key: p.trial for p in leg.plan.trials if p.trial.repeats == "auto"}
    if not autos:
        return []
    stored: dict[str, list[TrialResult]] = {}
    for r in leg.ledger.stored():
        if r.repeat is not None and r.repeat.config_key in autos:
            stored.setdefault(r.repeat.config_key, []).append(r)
    added: list[PlannedTrial] = []
    for key, trial in autos.items():
        repeats = stored.get(key, [])
        if any(not r.ok for r in repeats):
            continue  # a repeat that failed will fail again: no more of them
        values = [v for r in repeats if not disturbances(r) and (v := repeat_value(r)) is not None]
        wanted = max(repeats_needed(values), AUTO_PILOT if len(values) < 2 else 2)
        planned = leg.planned.get(key, AUTO_PILOT)
        more = min(wanted - len(values), AUTO_MAX - planned)
        if more <= 0:
            continue
        for index in range(planned, planned + more):
            added.append(PlannedTrial(repeat_key(key, index), len(leg.plan.trials) + leg.added, trial, index))
            leg.added += 1
        leg.planned[key] = planned + more
    if added:
        leg.ledger.grew(added)
    return added


def _stranded(legs: list[Leg], queue: list[tuple[Leg, PlannedTrial]]) -> None:
    for leg in legs:
        if waiting := sum(1 for queued, _ in queue if queued is leg):
            leg.ledger.reporter.note(f"{waiting} trials wait for {leg.where}, which left the fleet; --resume runs "
                                     "them once it is back")  # fmt: skip


class LocalPlacement:
    """One slot, this machine's launcher: a trial runs to its end when started (progress hears it after its
    cool-down), and ``wait`` hands it back."""

    def __init__(self, launcher: Launcher, host: str | None, name: str = "local") -> None:
        self.launcher = launcher
        self.slot = Slot(name, host)
        self._ended: list[Ended] = []

    def free(self) -> list[Slot]:
        return [] if self._ended else [self.slot]

    def start(self, start: Start) -> None:
        reporter = start.leg.ledger.reporter
        launched = self.launcher.launch(
            start.planned.trial,
            cool_first=start.cool_first,
            tick=reporter.status,
            cooled=lambda: reporter.trial_started(start.planned, start.index),
            context=start.context,
        )
        self._ended.append(Ended(start, launched.finished))

    def busy(self) -> bool:
        return bool(self._ended)

    def wait(self, queued: list[tuple[Leg, PlannedTrial]]) -> list[Ended]:
        ended, self._ended = self._ended, []
        return ended
