"""Running a planned sweep: one worker per trial, each result stored as it ends, resumable, restoring the device.

* A trial that fails (crash, out of memory, timeout, or an error in the launcher itself) is stored with its status
  and the sweep goes on.
* Each result is stored, linked to its sweep and key, in one transaction as soon as the trial ends; ``resume``
  skips the keys already stored, so a sweep killed at any point loses no finished trial and repeats none.
* Each trial is claimed in the store (one write transaction) before it runs, so two launchers running the same
  sweep on one store at once share its trials instead of both running every one.
* Ctrl-C and SIGTERM stop the sweep between or during trials (the running worker is killed by its launcher);
  frequencies are restored on every way out (see :class:`~edgebench.host.frequency.FrequencyControl`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from edgebench.errors import UsageError
from edgebench.host.frequency import FrequencyControl
from edgebench.interrupts import sigterm_as_interrupt
from edgebench.measure.trial import failed_result
from edgebench.records.result import SweepInfo, TrialResult
from edgebench.records.trial import Trial
from edgebench.runner.launch import TrialRun, new_trial_id, run_trial
from edgebench.store import Store
from edgebench.store.rescue import save_or_keep
from edgebench.store.sqlite import Claimant
from edgebench.sweep.cooldown import CooldownOutcome, Cooler, cools_between
from edgebench.sweep.plan import Plan, PlannedTrial
from edgebench.targets import Target, open_target

Runner = Callable[..., TrialRun]


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


def run_sweep(
    plan: Plan,
    store: Store,
    *,
    config_json: str,
    cooler: Cooler,
    resume: bool = False,
    retry_failed: bool = False,
    target: Target | None = None,
    runner: Runner = run_trial,
    reporter: Reporter | None = None,
    is_root: Callable[[], bool] | None = None,
    journal: Path | None = None,
    host: str | None = None,
) -> SweepOutcome:
    """Run what ``plan`` still lacks in ``store`` on ``target`` (default: this machine); KeyboardInterrupt (Ctrl-C,
    SIGTERM) propagates after cleanup.  ``is_root`` overrides the target's answer (tests of the refusal); ``host``
    is recorded in each result as the host that ran it."""
    target = target or open_target()
    reporter = reporter or SilentReporter()
    done, todo = pending(plan, store, resume=resume, retry_failed=retry_failed)
    outcome = SweepOutcome(plan, skipped=len(plan.trials) - len(todo))
    claimant = Claimant.this_process()  # each trial is claimed in the store before it runs, and released after
    with contextlib.ExitStack() as stack:
        control = None
        if any(p.trial.freq_khz is not None for p in todo):
            control = FrequencyControl(
                target.sysfs(), is_root=is_root or target.is_root, journal=journal, notify=reporter.note
            )
            control.check()  # refuse before anything is recorded
        store.add_sweep(plan.sweep_id, len(plan.trials), config_json)
        try:
            stack.enter_context(sigterm_as_interrupt())
            if control is not None:
                stack.enter_context(control)
            reporter.begin(plan, todo, outcome.skipped)
            if resume and not done:
                reporter.note(f"nothing stored yet for sweep {plan.sweep_id}: running all of it (an unnamed sweep "
                              "whose configuration changed is a new sweep; give it a name to keep one id)")  # fmt: skip
            if cooler.config.until_idle:
                idle = cooler.measure_idle()
                reporter.note("cool-down: " + cooler.describe() + (f"; idle: {_temps(idle)}" if idle else ""))
            elif cooler.enabled:
                reporter.note("cool-down: " + cooler.describe())
            _run_todo(
                plan, todo, store, cooler, control, target, runner, reporter, outcome, claimant, retry_failed, host
            )
        except KeyboardInterrupt:
            outcome.interrupted = True
        finally:
            with contextlib.suppress(sqlite3.Error):  # a claim left behind is taken over: its process is gone
                store.release_claims(claimant)
    return outcome


def _run_todo(
    plan: Plan,
    todo: list[PlannedTrial],
    store: Store,
    cooler: Cooler,
    control: FrequencyControl | None,
    target: Target,
    runner: Runner,
    reporter: Reporter,
    outcome: SweepOutcome,
    claimant: Claimant,
    retry_failed: bool,
    host: str | None,
) -> None:
    previous: Trial | None = None
    for index, planned in enumerate(todo):
        taken = store.claim(plan.sweep_id, planned.key, claimant, retry_failed=retry_failed)
        if taken is not None:  # another launcher of this sweep got it first (or stored it meanwhile)
            reporter.note(f"trial {planned.key} ({planned.label}) skipped: {taken}")
            outcome.taken_elsewhere += 1
            continue
        cooled = CooldownOutcome(0.0, "none")
        if previous is not None and cools_between(cooler.config, previous, planned.trial):
            cooled = cooler.wait(reporter.status)
        reporter.trial_started(planned, index)
        freq_set = None
        if control is not None:
            if planned.trial.freq_khz is not None:
                freq_set = control.pin(planned.trial.cores, planned.trial.freq_khz)
            else:
                control.release()
        result, series = run_one(planned, runner, target)
        info = SweepInfo(
            sweep_id=plan.sweep_id,
            host=host,
            trial_key=planned.key,
            position=planned.position,
            freq_set_khz=freq_set,
            cooldown_s=round(cooled.waited_s, 3),
            cooldown_by=cooled.rule if cooler.enabled and previous is not None else None,
        )
        result = result.model_copy(update={"sweep": info})
        save_or_keep(store, result, series)  # a store that fails now keeps the trial in a file and stops the sweep
        outcome.results.append(result)
        reporter.trial_finished(planned, result)
        previous = planned.trial


def run_one(planned: PlannedTrial, runner: Runner, target: Target) -> tuple[TrialResult, dict[str, str]]:
    """Run one trial; whatever goes wrong in the launcher becomes a stored ``error`` result, not a lost sweep."""
    try:
        run = runner(planned.trial, target=target)
    except Exception as exc:  # KeyboardInterrupt is not an Exception: it stops the sweep
        reason = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}".rstrip(": ")
        return failed_result(planned.trial, new_trial_id(), "error", reason, [], {}), {}
    return run.result, run.series()


def _temps(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f} °C" for k, v in values.items())
