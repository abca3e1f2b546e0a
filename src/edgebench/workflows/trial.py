"""One trial, the ``edgebench run`` use case: a Trial made from settings, placed on a device, launched, measured,
kept.  The result is handed over before it is stored, so a store that fails at the end cannot take the figures
with it (the caller prints them first; the record then waits in a rescue file)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.records.result import TrialResult
from edgebench.workflows.common import Notify, placed, quiet

if TYPE_CHECKING:
    from edgebench.measure.repeats import ConfigurationSummary
    from edgebench.records.trial import Trial
    from edgebench.targets import Target


@dataclass(frozen=True)
class TrialRequest:
    """A trial to run: its settings by Trial field, and the device and store it runs against.

    ``settings`` holds values as the settings' parsers read them (:func:`edgebench.config.settings.read_flag`), or
    plain values (``{"model": "lenet", "steps": 5}``); ``cores`` may be a role (big, little, all), resolved on the
    device.  ``store=None`` is the default store; ``no_store`` keeps nothing.
    """

    settings: Mapping[str, Any] = field(default_factory=dict)
    target: str | None = None
    sysfs_root: str = "/"
    root: bool = False
    store: Path | None = None
    no_store: bool = False


@dataclass(frozen=True)
class TrialRun:
    """A trial run: its result, where it is stored (None with ``no_store``), and whether layer spans were recorded
    that ``no_store`` did not keep (``edgebench layers`` and ``trace`` read them from the store).

    With ``repeats`` (the setting, N > 1 or ``auto``) the configuration ran as a plan of its repeats, each a trial in
    a fresh worker process: ``repeats`` holds them all in index order, ``result`` is the last to finish and
    ``sweep_id`` names the run in the store (``edgebench compare`` takes it)."""

    result: TrialResult
    store: Path | None
    spans_not_kept: bool
    repeats: list[TrialResult] = field(default_factory=list)
    sweep_id: str | None = None
    interrupted: bool = False
    #: The configuration over its repeats (its interval, the spread between and within them); None for one trial.
    summary: ConfigurationSummary | None = None


def run_trial(
    request: TrialRequest,
    *,
    notify: Notify = quiet,
    on_result: Callable[[TrialResult], None] = lambda result: None,
) -> TrialRun:
    """Make the Trial, check its placement on the device, run it through the launch path and store it.

    Everything a user can get wrong (a setting, cores the device lacks, an unusable store) is refused before the
    trial starts.  ``on_result`` gets the result once it is stored, or kept in a rescue file: a measured trial is
    stored before anything prints it (the summary's OverflowError on a 400-digit budget lost the trial);
    ``notify`` the warnings and notes (threads oversubscribing the cores, what the launch session did).  A store
    that refuses the finished trial raises :class:`~edgebench.store.rescue.NotStored` naming the file that keeps it
    (after ``on_result``), and a store this run created is not left behind empty when the run is refused.
    """
    from edgebench.config.flags import build
    from edgebench.config.settings import SETTINGS, with_adaptive_minimum
    from edgebench.config.trial import make_trial
    from edgebench.launch.session import Launcher, open_store
    from edgebench.launch.trial import resolve_placement
    from edgebench.measure.notes import thread_oversubscription
    from edgebench.store.sqlite import close_or_discard
    from edgebench.targets import open_target

    target = open_target(request.target, sysfs_root=request.sysfs_root, root=request.root or None)
    given = placed(dict(request.settings), target)
    trial = build(make_trial, with_adaptive_minimum(given), {s.field: s.flag for s in SETTINGS})
    placement = resolve_placement(trial, target)  # a bad --cores or --threads fails before anything starts
    assert placement.threads is not None and placement.cores is not None
    oversubscribed = thread_oversubscription(placement.threads, len(placement.cores))
    if oversubscribed:  # allowed, and recorded in the result: a measurement of oversubscription
        notify(f"edgebench: warning: --threads: {oversubscribed}")
    if trial.repeats != 1:
        return _run_repeats(trial, request, target, notify, on_result)
    db = open_store(request.store, no_store=request.no_store)  # an unusable or damaged store fails before the trial
    launcher = Launcher(
        target,
        store=db,
        pins_frequency=trial.freq_khz is not None,  # pinned for the trial, the policies put back after
        frequency_flag="--frequency",
        notify=lambda note: notify(f"note: {note}"),
    )
    try:
        with launcher:
            outcome = launcher.launch(trial).finished
        launcher.keep(outcome, then=lambda: on_result(outcome.result))
    finally:
        if db is not None:
            close_or_discard(db)
    spans_dropped = request.no_store and outcome.spans_json is not None
    return TrialRun(outcome.result, None if db is None else db.path, spans_dropped)


def _run_repeats(
    trial: Trial, request: TrialRequest, target: Target, notify: Notify, on_result: Callable[[TrialResult], None]
) -> TrialRun:
    """The configuration's repeats as one plan (stored as the sweep ``run-<hash>-<time>``), each a trial in a fresh
    worker process, ``auto`` adding repeats as their spread asks."""
    from edgebench.measure.repeats import summarize_configuration
    from edgebench.workflows.plans import PlanOptions, keyed, run_plan

    options = PlanOptions(target=request.target, root=request.root, store=request.store, no_store=request.no_store)
    done = run_plan("run", keyed([trial]), options, target, config={"trial": trial.model_dump(mode="json")},
                    on_result=lambda planned, result: on_result(result), notify=notify)  # fmt: skip
    repeats = sorted(done.results.values(), key=lambda r: r.repeat.index if r.repeat else 0)
    if not repeats:
        raise KeyboardInterrupt
    last = max(repeats, key=lambda r: r.trial_id)
    spans_dropped = request.no_store and trial.trace != "none"
    summary = summarize_configuration(repeats)
    return TrialRun(last, done.store, spans_dropped, repeats, done.sweep_id, done.interrupted, summary)
