"""The local executor: the sweep on the target this machine opens (``local``, or one ``--target`` names), every trial
one after another through :func:`~edgebench.sweep.execute.run_sweep`.  (Spreading trials over many devices is
the Ray executor's, in :mod:`edgebench.fleet`.)"""

from __future__ import annotations

import socket

from edgebench.launch.cooldown import Cooler
from edgebench.sweep.execute import SweepOutcome, run_sweep
from edgebench.sweep.job import SweepJob
from edgebench.targets import open_target


class LocalExecutor:
    def __init__(self, *, address: str | None = None) -> None:
        if address is not None:
            from edgebench.errors import UsageError

            raise UsageError("--address", "the local executor runs on this machine; give --executor ray with it")

    def run(self, job: SweepJob) -> SweepOutcome:
        target = job.device or open_target(job.target, sysfs_root=job.sysfs_root)
        return run_sweep(
            job.plan,
            job.store,
            config_json=job.config_json,
            cooler=Cooler(job.cooldown, target.sysfs()),
            resume=job.resume,
            retry_failed=job.retry_failed,
            target=target,
            reporter=job.reporter,
            journal=job.journal,
            host=socket.gethostname(),
        )

    def run_each(self, jobs: list[SweepJob]) -> list[SweepOutcome]:
        """One machine is one device: its sweeps run one after another (a ``targets:`` axis of several devices
        runs one process per target instead, see ``edgebench sweep``)."""
        return [self.run(job) for job in jobs]
