"""The machine edgebench runs on: the agent runs in this process, the device's files are this machine's.

``sysfs_root`` points the device's files at a tree copied from another device (``--sysfs-root``), which is how
sensors, core roles and frequency control are exercised against recorded Jetson, phone and laptop trees; the
worker and its process sensors still run here.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from edgebench.host.environment import allowed_cores, host_environment
from edgebench.host.frequency import running_as_root
from edgebench.host.sysfs import SysFS
from edgebench.host.workdirs import COMMAND_MARKER, remove_stale_work_dirs, work_dir
from edgebench.records.bundle import TrialBundle
from edgebench.records.trial import Trial
from edgebench.registry import BACKENDS
from edgebench.targets.base import TargetCapabilities
from edgebench.targets.shell import LocalShell, Shell


class LocalTarget:
    name = "local"
    #: perf events are counted here, by edgebench's own launcher; the files are this machine's (or a copied tree's).
    capabilities = TargetCapabilities(local_counters=True)

    def __init__(self, sysfs_root: str | os.PathLike[str] = "/") -> None:
        self.sysfs_root = str(sysfs_root)

    @classmethod
    def open(cls, spec: str, *, sysfs_root: str = "/") -> LocalTarget:
        return cls(sysfs_root)

    def sysfs(self) -> SysFS:
        return SysFS(self.sysfs_root)

    def allowed_cores(self) -> tuple[int, ...]:
        return allowed_cores()

    def is_root(self) -> bool:
        return running_as_root()

    def environment(self) -> dict[str, Any]:
        return host_environment(self.sysfs())

    def missing_device(self, backend: str, device: str) -> str | None:
        return BACKENDS.load(backend).missing_device(device)  # the backend reads this machine, framework unloaded

    def missing_counters(self, names: tuple[str, ...]) -> str | None:
        """Why this machine cannot count these perf events (one line), or None: opened and closed once here.
        (A remote target's worker refuses them the same way when it opens them.)"""
        from edgebench.host.perf_events import refusal

        return refusal(names) if names else None

    def run_python_agent(self, module: str, trial: Trial, *, sample: bool = True) -> TrialBundle:
        """Run the launcher's Python agent in this process: the device is this machine (``module`` names it, so that
        the launcher, not the target, chooses the agent)."""
        agent = importlib.import_module(module)
        return agent.run_agent(trial, sysfs_root=self.sysfs_root, sample=sample)  # type: ignore[no-any-return]

    @contextlib.contextmanager
    def command_shell(self) -> Iterator[tuple[Shell, str]]:
        """A shell in a fresh work folder of this machine (pushed files go with it) and the root of the device's
        files as the device-side script sees them (``""`` for this machine's own; the script cds away)."""
        root = "" if self.sysfs().is_live else str(Path(self.sysfs_root).resolve())
        remove_stale_work_dirs()
        with work_dir("command-") as work:
            (Path(work) / COMMAND_MARKER).touch()
            yield LocalShell(workdir=work), root
