"""The launcher: one trial on one target, measured and ready to store.

A target runs the trial on its device through the device-side agent (:mod:`edgebench.runner.agent`) and hands
back a :class:`~edgebench.records.bundle.TrialBundle`; the launcher only turns that into a result
(:func:`edgebench.measure.trial.measure`).  Nothing here reads the device itself: placement checks use the
target's cores, and the device's clock, files and environment are the agent's.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass

from edgebench.errors import UsageError
from edgebench.host.cpuset import format_cpu_list
from edgebench.measure.notes import thread_oversubscription
from edgebench.measure.trial import measure
from edgebench.records.events import Event, as_events, dump_events
from edgebench.records.result import TrialResult
from edgebench.records.sampling import SamplerMeta
from edgebench.records.trial import Trial
from edgebench.targets import Target, open_target


@dataclass
class TrialRun:
    """A finished trial: the result, and the raw series the store keeps beside it."""

    result: TrialResult
    events: list[Event]
    samples_csv: str | None
    #: The span table (JSON) of a traced trial (``--trace``), else None.
    spans_json: str | None = None
    #: What the sampler recorded besides the numbers: power channels, column labels, its own cost.
    sampler_meta: SamplerMeta | None = None

    def series(self) -> dict[str, str]:
        """The raw series the store keeps beside the result: step events (JSON lines), sensor samples (CSV) with
        the sampler's meta (JSON: power channels, labels), and with ``--trace`` the layer or op spans (JSON)."""
        series = {"events": dump_events(as_events(self.events))}
        if self.samples_csv is not None:
            series["samples"] = self.samples_csv
        if self.spans_json is not None:
            series["spans"] = self.spans_json
        if self.sampler_meta is not None:
            series["sampler_meta"] = json.dumps(asdict(self.sampler_meta))
        return series


def new_trial_id() -> str:
    """Sortable, and unique enough for launchers sharing a store: ``20261122-031502-4f9a0c1e``.

    Commands take any unambiguous prefix, so the 32 random bits cost nothing to type.
    """
    return time.strftime("%Y%m%d-%H%M%S") + "-" + os.urandom(4).hex()


def resolve_placement(trial: Trial, target: Target | None = None) -> Trial:
    """Fill in cores/threads for the target's device; a core it may not use is a usage error on ``--cores``."""
    allowed = (target or open_target()).allowed_cores()
    missing = sorted(set(trial.cores or ()) - set(allowed))
    if missing:
        raise UsageError(
            "--cores",
            f"cpu {format_cpu_list(missing)} is not available here (usable: {format_cpu_list(allowed)})",
        )
    placed = trial.with_placement(allowed)
    assert placed.threads is not None and placed.cores is not None
    try:
        thread_oversubscription(placed.threads, len(placed.cores))
    except ValueError as exc:
        raise UsageError("--threads", str(exc)) from None
    return placed


def check_device_present(trial: Trial, target: Target | None = None, field: str = "--device") -> None:
    """Refuse a trial whose device the target lacks (``--device cuda`` with a CPU-only torch, no driver, no GPU N)
    before anything starts; the target asks the trial's backend where the worker would run."""
    reason = (target or open_target()).missing_device(trial.backend, trial.device)
    if reason is not None and trial.device == "cpu":  # every machine has a CPU: it is the backend's package missing
        raise UsageError(field.replace("device", "backend"), f"{trial.backend}: {reason}")
    if reason is not None:
        raise UsageError(field, f"{trial.device}: {reason}")


def run_trial(trial: Trial, *, target: Target | None = None, sysfs_root: str = "/", sample: bool = True) -> TrialRun:
    """Run ``trial`` on ``target`` (default: this machine, its files under ``sysfs_root``) and return its result;
    failures come back as a result with a status."""
    target = target or open_target(sysfs_root=sysfs_root)
    check_device_present(trial, target)  # before the target starts anything: a missing device is a usage error
    bundle = target.run(resolve_placement(trial, target), sample=sample)
    result = measure(bundle, new_trial_id()).model_copy(update={"target": target.name})
    spans = bundle.spans_json if bundle.failure is None else None
    return TrialRun(result, bundle.events, bundle.samples_csv, spans, bundle.sampler_meta)
