"""Running trials one after another from a command and storing each as it ends (``feasibility``, ``frameworks``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult
    from edgebench.records.trial import Trial
    from edgebench.targets import Target


@contextmanager
def recorded_runs(
    store: Path | None, no_store: bool, target: Target, *, sample: bool = True
) -> Iterator[Callable[[Trial], TrialResult]]:
    """A function that runs a trial on ``target`` and stores it at once (unless ``no_store``).

    The store is opened and verified before the first trial, so a damaged one is refused before minutes of
    measurement; a write that fails after a trial ran keeps the trial in a file (``save_or_keep``).
    """
    from edgebench.runner.launch import run_trial

    db = None
    if not no_store:
        from edgebench.store import Store

        db = Store(store)
        db.verify()

    def run(trial: Trial) -> TrialResult:
        outcome = run_trial(trial, target=target, sample=sample)
        if db is not None:
            from edgebench.store.rescue import save_or_keep

            save_or_keep(db, outcome.result, outcome.series())
        return outcome.result

    try:
        yield run
    finally:
        if db is not None:
            db.close()
