"""Finding stored trials: the list (filtered by model, sweep, target, status, the last N) and one trial's record,
optionally measured again from its kept events and samples by this edgebench (after a measurement fix)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError
from edgebench.workflows.common import read_store

if TYPE_CHECKING:
    from edgebench.measure.repeats import ConfigurationSummary
    from edgebench.records.result import TrialResult


@dataclass(frozen=True)
class TrialFilter:
    """Which stored trials: each field None for any."""

    model: str | None = None
    sweep: str | None = None
    target: str | None = None
    status: str | None = None
    last: int | None = None
    store: Path | None = None


def list_trials(wanted: TrialFilter) -> list[TrialResult]:
    """The stored trials that pass the filter, oldest first (``last``: the last N of them)."""
    from typing import get_args

    from edgebench.records.result import Status

    if wanted.status is not None and wanted.status not in get_args(Status):
        raise UsageError("--status", f"{wanted.status!r} is not a status; choose from {', '.join(get_args(Status))}")
    if wanted.last is not None and wanted.last < 1:
        raise UsageError("--last", "must be at least 1")
    with read_store(wanted.store) as db:
        if wanted.sweep is not None and not db.sweep_exists(wanted.sweep):
            raise UsageError(
                "--sweep", f"no sweep {wanted.sweep!r} in {db.path} (sweeps: {', '.join(db.sweep_ids()) or 'none'})"
            )
        rows = db.query(sweep_id=wanted.sweep)
    rows = [r for r in rows if (wanted.model is None or r.trial.model == wanted.model)
            and (wanted.target is None or r.target == wanted.target)
            and (wanted.status is None or r.status == wanted.status)]  # fmt: skip
    return rows[-wanted.last :] if wanted.last is not None else rows


def stored_trial(trial: str, *, remeasure: bool = False, store: Path | None = None) -> TrialResult:
    """One stored trial (an id or a unique prefix); with ``remeasure``, its figures computed again from its kept
    events and samples (nothing is written)."""
    with read_store(store) as db:
        try:
            result = db.get(trial)
        except KeyError as exc:
            raise UsageError("TRIAL", f"{exc.args[0]} in {db.path}; `edgebench trials` lists them") from None
        if not remeasure:
            return result
        from edgebench.launch.trial import remeasure as measure_again
        from edgebench.store.trials import finished_of

        try:
            return measure_again(finished_of(db, result)).result
        except ValueError as exc:
            raise UsageError("--remeasure", str(exc)) from None


def repeat_group(result: TrialResult, *, store: Path | None = None) -> ConfigurationSummary | None:
    """The configuration ``result`` is a repeat of, over every repeat its sweep stored (each key's latest result):
    its interval and spreads beside this repeat's own; None for a trial run outside ``--repeats``."""
    from edgebench.measure.repeats import group_key, summarize_configuration

    if result.repeat is None or result.sweep is None:
        return None
    with read_store(store) as db:
        stored = db.query(sweep_id=result.sweep.sweep_id)
    latest = {r.sweep.trial_key: r for r in stored if r.sweep is not None}
    mine = group_key(result)
    return summarize_configuration([r for r in latest.values() if r.repeat is not None and group_key(r) == mine])
