"""One trial on one target, measured into a :class:`~edgebench.records.finished.FinishedTrial` ready to store.

A target runs the trial on its device under the agent :mod:`edgebench.launch.agents` picks and hands back a
:class:`~edgebench.records.bundle.TrialBundle`; here it only becomes a result (:func:`edgebench.measure.trial.measure`).
Nothing here reads the device itself: placement checks use the target's cores, and the device's clock, files and
environment are the agent's.  A stored trial that kept its run can be measured again (:func:`remeasure`) after a
fix to the measurement, without running it again.
"""

from __future__ import annotations

import os
import time
from typing import cast

from edgebench.errors import UsageError
from edgebench.host.cpuset import format_cpu_list
from edgebench.launch.agents import command_counter_tool, run_on_target
from edgebench.measure.notes import thread_oversubscription
from edgebench.measure.trial import measure
from edgebench.records.finished import FinishedTrial
from edgebench.records.launch import LaunchContext
from edgebench.records.trial import Trial
from edgebench.targets import Target, open_target
from edgebench.targets.base import LocalCountersTarget


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
    target = target or open_target()
    reason = target.missing_device(trial.backend, trial.device)
    if reason is not None and trial.device == "cpu":  # every machine has a CPU: it is the backend's package missing
        raise UsageError(field.replace("device", "backend"), f"{trial.backend}: {reason}")
    if reason is not None:
        raise UsageError(field, f"{trial.device}: {reason}")
    if trial.counters and trial.command is not None:  # the user's command: counted by a tool the target has
        command_counter_tool(target, trial.counters)
        return
    if trial.counters and target.capabilities.local_counters:  # a remote worker refuses them when it opens them
        why = cast(LocalCountersTarget, target).missing_counters(trial.counters)
        if why is not None:
            raise UsageError("--counters", why)


def run_trial(
    trial: Trial,
    *,
    target: Target | None = None,
    sysfs_root: str = "/",
    sample: bool = True,
    context: LaunchContext | None = None,
) -> FinishedTrial:
    """Run ``trial`` on ``target`` (default: this machine, its files under ``sysfs_root``) and return it finished,
    recorded with ``context`` (its place in a sweep, its repeat, the clocks pinned for it) and the target's name;
    failures come back as a result with a status."""
    target = target or open_target(sysfs_root=sysfs_root)
    check_device_present(trial, target)  # before the target starts anything: a missing device is a usage error
    bundle = run_on_target(target, resolve_placement(trial, target), sample=sample)
    context = (context or LaunchContext()).model_copy(update={"target": target.name})
    return FinishedTrial.from_bundle(measure(bundle, new_trial_id(), context), bundle)


def remeasure(finished: FinishedTrial) -> FinishedTrial:
    """Measure a finished (stored) trial again from its events and samples, as the measurement now stands.

    The result keeps its id and what the launch added to it (target, sweep and its host, the start time); every
    measured figure is computed anew.  A trial whose run was not kept (stored before the record kept it, or one
    that never reached a device) cannot be measured again: ``ValueError`` says so.
    """
    bundle = finished.bundle()
    if bundle is None:
        raise ValueError(f"trial {finished.trial_id} does not keep its run (stored by an older edgebench, or it "
                         "never reached a device): it cannot be measured again")  # fmt: skip
    old = finished.result
    context = LaunchContext(target=old.target, sweep=old.sweep, repeat=old.repeat,
                            freq_applied_khz=old.cpu.freq_applied_khz)  # fmt: skip
    again = measure(bundle, old.trial_id, context).model_copy(update={"started_at": old.started_at})
    return finished.model_copy(update={"result": again})
