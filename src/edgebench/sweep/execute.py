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
* Which trial runs when (repeats interleaved, ``auto`` repeats added) is the one runner's
  (:mod:`edgebench.sweep.runner`), here with the local placement and on a fleet with Ray's; what it does for each
  planned trial -- claim it, choose whether the device cools down first, store its result -- is
  :class:`SweepLedger`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from edgebench.errors import UsageError
from edgebench.launch.cooldown import Cooler
from edgebench.launch.session import Launcher, Runner
from edgebench.store import Store
from edgebench.store.sqlite import Claimant
from edgebench.sweep.plan import Plan, PlannedTrial
from edgebench.sweep.runner import (
    Leg,
    LocalPlacement,
    Reporter,
    SilentReporter,
    SweepLedger,
    SweepOutcome,
    run_legs,
)
from edgebench.targets import Target, open_target


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
            run_legs([Leg(ledger, todo, skip=skip)], LocalPlacement(launcher, host))
        except KeyboardInterrupt:
            outcome.interrupted = True
        finally:
            ledger.release()
    return outcome


def _temps(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.1f} °C" for k, v in values.items())
