"""What the workstation needs from the device a trial runs on: a target.

Anything that reads or writes the device goes through its target: running a trial (the target runs the
device-side agent the launcher chose and returns its :class:`~edgebench.records.bundle.TrialBundle`), the cores a
trial may be placed on, the device's ``/proc`` and ``/sys`` (frequency pinning and restore, cool-down temperatures,
core roles), root rights and the device's environment.  The workstation itself only plans, measures, stores and
reports, so a new kind of device (over SSH, over adb) is a new transport behind this protocol, not a branch through
the launcher.
A target class is one line in ``registry.TARGETS`` (keyed by its URL scheme) and opens from the name a user gave
with a classmethod ``open(spec, *, sysfs_root)``.

What a target can do beyond that is declared by its class (:class:`TargetCapabilities`), as devlib's targets and
Zeus's device layer declare what a device can do, and the launcher reads the declaration rather than probing for
methods; each capability comes with the small protocol (:class:`ThermalStatusTarget`, :class:`LocalCountersTarget`,
:class:`MirroredSysFS`) that a target declaring it implements.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from edgebench.host.sysfs import SysFS
from edgebench.records.bundle import TrialBundle
from edgebench.records.trial import Trial
from edgebench.targets.shell import Shell


@dataclass(frozen=True)
class TargetCapabilities:
    """What a kind of target can do beyond what every target does; all off unless its class says so."""

    #: The device reports a thermal status of its own (Android's thermal service): the launcher asks it
    #: (:class:`ThermalStatusTarget`) before and after a trial instead of reading the thermal zones' trip points.
    thermal_status: bool = False
    #: perf events are counted on this machine, by edgebench's own launcher: the target says which it cannot count
    #: (:class:`LocalCountersTarget`).  Elsewhere a ``--command`` trial counts with the device's simpleperf or perf.
    local_counters: bool = False
    #: The device's files are read through a mirror refreshed at most once a second (:class:`MirroredSysFS`): the
    #: launcher refreshes it where it must read them as they are now (the thermal zones just after a trial).
    mirrored_sysfs: bool = False


class Target(Protocol):
    #: How a user names it: ``local``, later ``ssh://host`` or ``adb://SERIAL``.
    name: str
    #: What this kind of target can do beyond the methods below, declared by its class.
    capabilities: ClassVar[TargetCapabilities]

    def sysfs(self) -> SysFS:
        """The device's ``/proc`` and ``/sys``: read for sensors and core roles, written for frequencies."""
        ...

    def allowed_cores(self) -> tuple[int, ...]:
        """The cores a trial may be placed on (the agent's affinity on the device)."""
        ...

    def is_root(self) -> bool:
        """Whether the agent may write the device's frequency controls."""
        ...

    def environment(self) -> dict[str, Any]:
        """CPU, cores, governors, memory and OS of the device."""
        ...

    def missing_device(self, backend: str, device: str) -> str | None:
        """Why ``backend`` cannot reach ``device`` on this target (no CUDA build, no driver, no GPU N), or None."""
        ...

    def run_python_agent(self, module: str, trial: Trial, *, sample: bool = True) -> TrialBundle:
        """Run the Python agent ``module`` (the launcher chooses it) on the device; failures come back inside the
        bundle.  The module has ``run_agent(trial, *, sysfs_root, sample)`` and a ``main`` reading the trial on
        stdin, so a target may call it in-process (this machine) or run it with the device's Python."""
        ...

    def command_shell(self) -> AbstractContextManager[tuple[Shell, str]]:
        """A shell on the device for the device-side ``sh`` agent of a ``--command`` trial, in a work folder of its
        own while the context lasts, and the root of the device's files as that agent's script sees them."""
        ...


class ThermalStatusTarget(Target, Protocol):
    """A target declaring ``thermal_status``."""

    def thermal_status(self) -> int | None:
        """The device's thermal status now (Android's ``PowerManager.THERMAL_STATUS_*``: 0 none .. 6 shutdown);
        None where it reports none or cannot be asked."""
        ...


class LocalCountersTarget(Target, Protocol):
    """A target declaring ``local_counters``."""

    def missing_counters(self, names: tuple[str, ...]) -> str | None:
        """Why these perf events cannot be counted here (one line), or None."""
        ...


class MirroredSysFS(Protocol):
    """The files of a target declaring ``mirrored_sysfs``."""

    def refresh(self) -> None:
        """Read the device's files anew, now."""
        ...
