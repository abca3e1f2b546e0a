"""Running a planned sweep: one worker per trial, each result stored as it ends, resumable, restoring the device.

* A trial that fails (crash, out of memory, timeout, or an error in the launcher itself) is stored with its status
  and the sweep goes on.
* Each result is stored, linked to its sweep and key, in one transaction as soon as the trial ends; ``resume``
  skips the keys already stored, so a sweep killed at any point loses no finished trial and repeats none.
* Each trial is claimed in the store (one write transaction) before it runs, so two launchers running the same
  sweep on one store at once share its trials instead of both running every one.
* Ctrl-C and SIGTERM stop the sweep between or during trials (the running worker is killed by its launcher);
  frequencies are restored on every way out.  Cool-down, pinning, running, measuring and storing (with the rescue
  file) are the launch path's (:class:`~edgebench.launch.session.Launcher`); this module decides what runs when.
* What every sweep loop does for each planned trial -- claim it, choose whether the device cools down first, store
  its result with its place in the sweep -- is :class:`SweepLedger`'s, which the Ray driver
  (:mod:`edgebench.fleet.raycluster`) uses as this module's loop does.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from edgebench.config.sweep_file import CooldownConfig
from edgebench.errors import UsageError
from edgebench.launch.cooldown import CooldownOutcome, Cooler, cools_between
from edgebench.launch.session import Launcher, Runner
from edgebench.records.finished import FinishedTrial
from edgebench.records.result import SweepInfo, TrialResult
from edgebench.records.trial import Trial
from edgebench.store import Store
from edgebench.store.rescue import save_or_keep
from edgebench.store.sqlite import Claimant
from edgebench.sweep.plan import Plan, PlannedTrial
from edgebench.targets import Target, open_target


class Reporter(Protocol):
    """What the sweep tells its user (a progress bar on a terminal; nothing in tests)."""

    def begin(self, plan: Plan, todo: list[PlannedTrial], skipped: int) -> None: ...
    def trial_started(self, planned: PlannedTrial, index: int) -> None: ...
    def trial_finished(self, planned: PlannedTrial, result: TrialResult) -> None: ...
    def status(self, text: str) -> None: ...
    def note(self, text: str) -> None: ...


class SilentReporter:
    def begin(self, plan: Plan, todo: list[PlannedTrial], skipped: int) -> None:
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


def todo_of(plan: Plan, done: dict[str, str], *, retry_failed: bool) -> list[PlannedTrial]:
    """The planned trials a resumed sweep still has to run."""
    return [p for p in plan.trials if p.key not in done or (retry_failed and done[p.key] != "ok")]


def pending(plan: Plan, store: Store, *, resume: bool, retry_failed: bool) -> tuple[dict[str, str], list[PlannedTrial]]:
    """What ``store`` holds of the sweep and what is left to run; a stored sweep without ``--resume`` is refused."""
    done = store.sweep_done(plan.sweep_id)
    if done and not resume:
        missing = len(todo_of(plan, done, retry_failed=False))
        raise UsageError(
            "--resume",
            f"sweep {plan.sweep_id} already has {len(plan.trials) - missing} of its {len(plan.trials)} trials in "
            f"{store.path}; add --resume to run the {missing} missing, or give the sweep another name (--set name=...)",
        )
    return done, todo_of(plan, done, retry_failed=retry_failed)


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

    def record(
        self,
        planned: PlannedTrial,
        finished: FinishedTrial,
        *,
        host: str | None,
        previous: Trial | None,
        cooled: CooldownOutcome | None,
        freq_set_khz: dict[str, int] | None,
    ) -> TrialResult:
        """Store ``finished`` with its place in the sweep (a failing store keeps it in a rescue file and raises),
        add it to the outcome and report it.  ``host``: the executor's name for the host that ran it; ``previous``:
        what its device ran before it; ``cooled``: the cool-down before it (None: it never reached its device);
        ``freq_set_khz``: the clocks pinned for it."""
        info = SweepInfo(
            sweep_id=self.plan.sweep_id,
            host=host,
            trial_key=planned.key,
            position=planned.position,
            freq_set_khz=freq_set_khz,
            cooldown_s=round(cooled.waited_s, 3) if cooled else 0.0,
            cooldown_by=cooled.rule if cooled and self.cooldown.enabled and previous is not None else None,
        )
        result = finished.result.model_copy(update={"sweep": info})
        if result.energy.thermal_stabilization_seconds is not None and info.cooldown_s:  # the rest before it too
            rested = result.energy.thermal_stabilization_seconds + info.cooldown_s
            energy = result.energy.model_copy(update={"thermal_stabilization_seconds": rested})
            result = result.model_copy(update={"energy": energy})
        save_or_keep(self.store, finished.model_copy(update={"result": result}))
        self.outcome.results.append(result)
        self.reporter.trial_finished(planned, result)
        return result

    def release(self) -> None:
        """Give back the claims this run still holds (a claim left behind is taken over: its process is gone)."""
        with contextlib.suppress(sqlite3.Error):
            self.store.release_claims(self.claimant)


def run_sweep(
    plan: Plan,
    store: Store,
    *,
    config_json: str,
    cooler: Cooler,
    resume: bool = False,
    retry_failed: bool = False,
    target: Target | None = None,
    runner: Runner | None = None,
    reporter: Reporter | None = None,
    is_root: Callable[[], bool] | None = None,
    journal: Path | None = None,
    host: str | None = None,
    frequency_flag: str | None = None,
    skip: Callable[[PlannedTrial], str | None] | None = None,
    sample: bool = True,
) -> SweepOutcome:
    """Run what ``plan`` still lacks in ``store`` on ``target`` (default: this machine); KeyboardInterrupt (Ctrl-C,
    SIGTERM) propagates after cleanup.  ``is_root`` overrides the target's answer (tests of the refusal); ``host``
    is recorded in each result as the host that ran it; ``frequency_flag`` names the option a refused frequency
    control is reported against; ``skip`` says why a planned trial need not run (it is then neither run nor
    stored: a larger batch of a model that did not fit), or None; ``sample``: poll the sensors during each trial."""
    target = target or open_target()
    reporter = reporter or SilentReporter()
    done, todo = pending(plan, store, resume=resume, retry_failed=retry_failed)
    outcome = SweepOutcome(plan, skipped=len(plan.trials) - len(todo))
    # each trial is claimed in the store before it runs, and released after
    ledger = SweepLedger(plan, store, reporter, cooler.config, Claimant.this_process(), outcome, retry_failed)
    launcher = Launcher(
        target,
        store=store,
        cooler=cooler,
        pins_frequency=any(p.trial.freq_khz is not None for p in todo),
        journal=journal,
        frequency_flag=frequency_flag,
        is_root=is_root,
        notify=reporter.note,
        runner=runner,
        sample=sample,
        contain_errors=True,  # a launcher error is a stored error result, not a lost sweep
    )
    with launcher:  # frequency controls refused before anything is recorded
        store.add_sweep(plan.sweep_id, len(plan.trials), config_json)
        try:
            reporter.begin(plan, todo, outcome.skipped)
            if resume and not done:
                reporter.note(f"nothing stored yet for sweep {plan.sweep_id}: running all of it (an unnamed sweep "
                              "whose configuration changed is a new sweep; give it a name to keep one id)")  # fmt: skip
            if cooler.config.until_idle:
                idle = cooler.measure_idle()
                reporter.note("cool-down: " + cooler.describe() + (f"; idle: {_temps(idle)}" if idle else ""))
            elif cooler.enabled:
                reporter.note("cool-down: " + cooler.describe())
            _run_todo(todo, ledger, launcher, host, skip)
        except KeyboardInterrupt:
            outcome.interrupted = True
        finally:
            ledger.release()
    return outcome


def _run_todo(
    todo: list[PlannedTrial],
    ledger: SweepLedger,
    launcher: Launcher,
    host: str | None,
    skip: Callable[[PlannedTrial], str | None] | None,
) -> None:
    """The planned trials one after another on the launcher's target."""
    reporter = ledger.reporter
    previous: Trial | None = None
    for index, planned in enumerate(todo):
        if skip is not None and skip(planned) is not None:
            continue
        if not ledger.claim(planned):
            continue
        launched = launcher.launch(
            planned.trial,
            cool_first=ledger.cools_first(previous, planned.trial),
            tick=reporter.status,
            cooled=lambda: reporter.trial_started(planned, index),  # noqa: B023 (called before the loop moves on)
        )
        ledger.record(  # a failing store keeps the trial in a file and stops the sweep
            planned, launched.finished, host=host, previous=previous, cooled=launched.cooled,
            freq_set_khz=launched.freq_set_khz,
        )  # fmt: skip
        previous = planned.trial


def _temps(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f} °C" for k, v in values.items())
