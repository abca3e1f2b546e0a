"""A sweep, the ``edgebench sweep`` use case: a configuration (a YAML file, DNNTune's sections, ``--set`` overrides)
planned into trials with stable keys, then run by an executor (this machine one trial at a time, or a Ray fleet),
each trial stored as it ends, resumable, the device's frequencies restored.

Three steps, so that a caller can look before it runs: :func:`plan_sweep` checks and plans (what ``--dry-run``
prints), :func:`run_sweep` runs the plan, and :func:`sweep_each_target` runs a ``targets:`` axis on this machine as
one sweep process per device.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.config.sweep_file import LoadedConfig
    from edgebench.records.result import TrialResult
    from edgebench.store import Store
    from edgebench.sweep.execute import Reporter
    from edgebench.sweep.job import SweepJob
    from edgebench.sweep.plan import Plan
    from edgebench.targets import Target


@dataclass(frozen=True)
class SweepRequest:
    """A sweep as the user describes it: the configuration file (None: the settings' defaults) and its ``--set``
    overrides, the executor and the device, the store, and whether to resume (and rerun failed trials)."""

    config: Path | None = None
    overrides: Sequence[str] = ()
    target_ci: str | None = None
    resume: bool = False
    retry_failed: bool = False
    max_trials: int = 10_000
    store: Path | None = None
    sysfs_root: Path | None = None
    executor: str = "local"
    address: str | None = None
    target: str | None = None
    root: bool = False

    @property
    def all_overrides(self) -> list[str]:
        """Every override: the ``--set`` ones and ``target_ci`` (a shorthand for ``--set target_ci=...``)."""
        return [*self.overrides, *([f"target_ci={self.target_ci}"] if self.target_ci is not None else [])]

    def resume_command(self) -> str:
        """The exact command that resumes this sweep: the same file, every ``--set``, the same store, quoted for a
        shell.  Leaving an override out would plan another sweep (another id, other trials), so it keeps all."""
        words = ["edgebench", "sweep"] + ([str(self.config)] if self.config else [])
        for item in self.overrides:
            words += ["--set", item]
        given = [("--target-ci", self.target_ci), ("--store", self.store), ("--sysfs-root", self.sysfs_root),
                 ("--target", self.target), ("--executor", self.executor if self.executor != "local" else None),
                 ("--address", self.address)]  # fmt: skip
        for flag, value in given:
            if value is not None:
                words += [flag, str(value)]
        return shlex.join([*words, *(["--root"] if self.root else []), "--resume"])


@dataclass(frozen=True)
class SweepLeg:
    """One sweep of a run: the target it names and its configuration (a ``targets:`` axis on a fleet has one leg
    per target, each its own sweep ``<name>-<target>``), and its plan."""

    target: str
    loaded: LoadedConfig
    plan: Plan

    @property
    def order_seed(self) -> int | None:
        """The seed of the random order the plan's repeats run in (None: the plan's own order)."""
        from edgebench.sweep.runner import order_seed

        return order_seed(self.plan)


@dataclass(frozen=True)
class PlannedSweep:
    """What :func:`plan_sweep` found: the configuration and its notes, and either the legs planned here or, for a
    ``targets:`` axis on this machine, the targets each planned and run by their own process."""

    request: SweepRequest
    loaded: LoadedConfig
    legs: list[SweepLeg]
    each_target: list[str]
    #: The device the local executor runs on (None on a fleet, whose hosts open their own).
    device: Target | None
    target_field: str

    @property
    def notes(self) -> tuple[str, ...]:
        return self.loaded.notes


@dataclass(frozen=True)
class SweepRun:
    """What a sweep run did: each leg's stored trials (this run's and those stored before a resume), the trials run
    now, and the counts behind the summary line."""

    legs: list[SweepLeg]
    stored: list[list[TrialResult]]
    ran: list[TrialResult]
    skipped: int
    taken_elsewhere: int
    interrupted: bool
    store: Path

    @property
    def planned(self) -> int:
        return sum(len(leg.plan.trials) for leg in self.legs)

    @property
    def failed(self) -> list[TrialResult]:
        return [r for r in self.ran if not r.ok]


def axis_sweep_name(base: str, spec: str) -> str:
    """The sweep that a ``targets:`` axis stores for one target, on every executor: ``<name>-<target>``."""
    return f"{base}-{re.sub(r'[^A-Za-z0-9._-]+', '_', spec)}".strip("_")


def plan_sweep(request: SweepRequest) -> PlannedSweep:
    """Read the configuration and plan its trials on the device (each key checked, a grid over ``max_trials``
    refused before it is planned); an error names the key as the user wrote it (file or ``--set``)."""
    from edgebench.config.sweep_file import load_config
    from edgebench.registry import EXECUTORS
    from edgebench.sweep.plan import plan
    from edgebench.targets import open_target
    from edgebench.targets.named import parse_targets

    if request.executor not in EXECUTORS:
        raise UsageError(
            "--executor", f"unknown executor {request.executor!r}; choose one of: {', '.join(EXECUTORS.names())}"
        )
    overrides = request.all_overrides
    loaded = load_config(request.config, overrides)
    axis = loaded.config.targets
    named = parse_targets(axis, "targets") if isinstance(axis, dict) else None
    fleet = request.executor != "local"  # the fleet's hosts open its devices; the driver plans on its own
    specs, target_field = [(request.target or "local", loaded)], "--target"
    if axis and request.target is None:
        if not fleet:  # each target's own process plans against that target (a dry run too)
            return PlannedSweep(request, loaded, [], list(axis), None, "targets")
        # on a fleet the driver runs the axis itself: the sweeps the local executor's processes would store
        base = _axis_base(loaded, request.config)
        specs = [(spec, load_config(request.config, [*overrides, f"name={axis_sweep_name(base, spec)}"]))
                 for spec in axis]  # fmt: skip
        target_field = "targets"
    target = open_target(None if fleet else request.target, sysfs_root=str(request.sysfs_root or "/"),
                         root=request.root or None, named=named)  # fmt: skip
    legs = []
    for spec, leg in specs:
        try:
            planned = plan(leg.config, source=request.config, sysfs=target.sysfs(), allowed=target.allowed_cores(),
                           max_trials=request.max_trials)  # fmt: skip
        except UsageError as exc:  # name the key as the user wrote it (file or --set, DNNTune or native)
            raise leg.relabel(exc) from None
        legs.append(SweepLeg(spec, leg, planned))
    return PlannedSweep(request, loaded, legs, [], None if fleet else target, target_field)


def run_sweep(planned: PlannedSweep, *, reporter: Reporter) -> SweepRun:
    """Run the planned legs on the executor and store each trial as it ends (``reporter`` hears the progress).

    A device this machine lacks, a missing extra, a stray ``address`` or a damaged store is refused before the
    first trial, and a store this call created is then not left behind empty.
    """
    from edgebench.store import Store
    from edgebench.store.sqlite import default_store_path, discard_if_empty
    from edgebench.sweep.job import open_executor

    request, loaded = planned.request, planned.loaded
    _check_devices(planned)
    runner = open_executor(request.executor, address=request.address)  # a missing extra or a stray --address
    store_path = Path(request.store) if request.store else default_store_path()
    fresh = not store_path.exists()
    try:
        with Store(request.store) as db, _relabelled(loaded):
            db.verify()  # a damaged store is refused before the first trial, not after it
            jobs = [_job(leg, planned, db, reporter) for leg in planned.legs]
            outcomes = runner.run_each(jobs)  # type: ignore[attr-defined]
            stored = [db.query(sweep_id=leg.plan.sweep_id) for leg in planned.legs]
    except UsageError:
        if fresh:  # refused before any trial ran (a frequency this device cannot set...): no empty store left
            discard_if_empty(store_path)
        raise
    ran = [r for o in outcomes for r in o.results]
    return SweepRun(planned.legs, stored, ran, sum(o.skipped for o in outcomes),
                    sum(o.taken_elsewhere for o in outcomes), any(o.interrupted for o in outcomes),
                    db.path)  # fmt: skip


def _job(leg: SweepLeg, planned: PlannedSweep, db: Store, reporter: Reporter) -> SweepJob:
    """One leg as the executor's job: its plan, configuration and target; the run's store, reporter and options."""
    from edgebench.sweep.job import SweepJob

    r = planned.request
    config_json = json.dumps({"source": leg.loaded.source, "config": leg.loaded.config.model_dump(mode="json")})
    return SweepJob(plan=leg.plan, store=db, config_json=config_json, cooldown=leg.loaded.config.cooldown,
                    reporter=reporter, resume=r.resume, retry_failed=r.retry_failed, target=leg.target,
                    target_field=planned.target_field, device=planned.device,
                    sysfs_root=str(r.sysfs_root or "/"))  # fmt: skip


def _check_devices(planned: PlannedSweep) -> None:
    """A device (``cuda``...) this machine lacks is refused before the first trial (a fleet's hosts check theirs)."""
    from edgebench.launch.trial import check_device_present

    if planned.device is None:
        return
    first_of_each = {(p.trial.backend, p.trial.device): p.trial for p in reversed(planned.legs[0].plan.trials)}
    for trial in first_of_each.values():
        try:
            check_device_present(trial, planned.device, field="device")
        except UsageError as exc:
            raise planned.loaded.relabel(exc) from None


def sweep_each_target(
    planned: PlannedSweep, *, dry_run: bool = False, on_line: Callable[[str, str], None]
) -> dict[str, int]:
    """``targets:`` in a sweep: one ``edgebench sweep --target T`` per device, a few at once, each running its trials
    one at a time on its device and storing them as the sweep ``<name>-<target>``.  Each has its own process (its
    own signals, store connection and frequency restore); ``on_line(target, line)`` hears their output as it comes.
    Returns each target's exit code."""
    import sys

    from edgebench.host.lifetime import run_children

    request = planned.request
    base = _axis_base(planned.loaded, request.config)
    children = {}
    for spec in planned.each_target:
        args = [sys.executable, "-m", "edgebench", "sweep", *([str(request.config)] if request.config else [])]
        for item in [*request.all_overrides, f"name={axis_sweep_name(base, spec)}"]:
            args += ["--set", item]
        args += ["--target", spec, *(["--store", str(request.store)] if request.store else [])]
        args += [*(["--resume"] if request.resume else []), *(["--retry-failed"] if request.retry_failed else [])]
        args += [*(["--root"] if request.root else []), *(["--dry-run"] if dry_run else [])]
        children[spec] = args
    return run_children(children, on_line)  # a few at a time: a list of hundreds started hundreds of processes


@contextlib.contextmanager
def _relabelled(loaded: LoadedConfig) -> Iterator[None]:
    try:
        yield
    except UsageError as exc:
        raise loaded.relabel(exc) from None


def _axis_base(loaded: LoadedConfig, config: Path | None) -> str:
    return loaded.config.name or (config.stem if config else "sweep")
