"""Executors: how a planned sweep's trials reach devices.  What every executor is given (:class:`SweepJob`: the plan,
the driver's store, how the sweep wants its devices treated), what it does with it (:class:`Executor`), and the
one the user named (:func:`open_executor`): ``local`` (:mod:`edgebench.sweep.local`) runs the trials one after
another on this machine's target; ``ray`` (:mod:`edgebench.fleet.raycluster`) spreads them over the devices a Ray
cluster's hosts advertise (``edgebench fleet join``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from edgebench.config.sweep_file import CooldownConfig
from edgebench.registry import EXECUTORS
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


def open_executor(name: str, *, address: str | None = None) -> Executor:
    """The executor a user named (``--executor``), connected to ``address`` where it has one."""
    return EXECUTORS.load(name)(address=address)  # type: ignore[no-any-return]
