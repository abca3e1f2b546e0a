"""The machine edgebench runs on: the agent runs in this process, the device's files are this machine's.

``sysfs_root`` points the device's files at a tree copied from another device (``--sysfs-root``), which is how
sensors, core roles and frequency control are exercised against recorded Jetson, phone and laptop trees; the
worker and its process sensors still run here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from edgebench.host.environment import allowed_cores, host_environment
from edgebench.host.frequency import running_as_root
from edgebench.host.sysfs import SysFS
from edgebench.records.bundle import TrialBundle
from edgebench.records.trial import Trial
from edgebench.registry import BACKENDS
from edgebench.runner.agent import run_agent


class LocalTarget:
    name = "local"

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

    def run(self, trial: Trial, *, sample: bool = True) -> TrialBundle:
        if trial.command is not None:  # the user's own workload: through /bin/sh and the device-side sh sampler
            from edgebench.command.run import run_command_trial
            from edgebench.runner.agent import COMMAND_MARKER, remove_stale_work_dirs, work_dir
            from edgebench.targets.shell import LocalShell

            root = "" if self.sysfs().is_live else str(Path(self.sysfs_root).resolve())  # the script cds away
            remove_stale_work_dirs()
            with work_dir("command-") as work:  # pushed files go with it
                (Path(work) / COMMAND_MARKER).touch()
                shell = LocalShell(workdir=work)
                return run_command_trial(trial, shell, sysfs=self.sysfs(), root=root, env=self.environment(),
                                         sample=sample)  # fmt: skip
        return run_agent(trial, sysfs_root=self.sysfs_root, sample=sample)
