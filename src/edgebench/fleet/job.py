"""What every executor is given: the plan, the driver's store, and how the sweep wants its devices treated."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from edgebench.config.sweep_file import CooldownConfig
from edgebench.store import Store
from edgebench.sweep.execute import Reporter, SweepOutcome
from edgebench.sweep.plan import Plan
from edgebench.targets import Target


@dataclass
class SweepJob:
    plan: Plan
    #: The driver's store: the only writer, whichever executor runs the trials.
    store: Store
    config_json: str
    cooldown: CooldownConfig
    reporter: Reporter
    resume: bool = False
    retry_failed: bool = False
    #: The target the sweep names for its trials (``local`` unless ``--target`` says otherwise); on a fleet a
    #: device's name or ``class:CLASS`` (:mod:`edgebench.fleet.placement`).
    target: str = "local"
    #: Where the user named ``target``, for errors about it: ``--target``, or ``targets`` (the sweep file's axis).
    target_field: str = "--target"
    #: The target the local executor runs on, opened by the command (a fleet's hosts open their own devices).
    device: Target | None = None
    sysfs_root: str = "/"
    #: Where the local executor journals frequencies to restore after a crash.
    journal: Path | None = None


class Executor(Protocol):
    def run(self, job: SweepJob) -> SweepOutcome:
        """Run what ``job.plan`` still lacks in ``job.store``; Ctrl-C returns an interrupted outcome after cleanup."""
        ...

    def run_each(self, jobs: list[SweepJob]) -> list[SweepOutcome]:
        """Run several sweeps (a ``targets:`` axis: one per target), in parallel where their devices differ."""
        ...
