"""What the workstation needs from the device a trial runs on: a target.

Anything that reads or writes the device goes through its target: running a trial (the target runs the
device-side agent the launcher chose and returns its :class:`~edgebench.records.bundle.TrialBundle`), the cores a
trial may be placed on, the device's ``/proc`` and ``/sys`` (frequency pinning and restore, cool-down temperatures,
core roles), root rights and the device's environment.  The workstation itself only plans, measures, stores and
reports, so a new kind of device (over SSH, over adb) is a new transport behind this protocol, not a branch through
the launcher.
A target class is one line in ``registry.TARGETS`` (keyed by its URL scheme) and opens from the name a user gave
with a classmethod ``open(spec, *, sysfs_root)``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from edgebench.host.sysfs import SysFS
from edgebench.records.bundle import TrialBundle
from edgebench.records.trial import Trial
from edgebench.targets.shell import Shell


class Target(Protocol):
    #: How a user names it: ``local``, later ``ssh://host`` or ``adb://SERIAL``.
    name: str

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
