"""The Ray executor: one sweep over the devices of a Ray cluster, the driver the only writer of its store.

The driver plans as the local executor does and runs the sweep through the same runner (:mod:`edgebench.sweep.
runner`: order, repeats, claims, cool-down choice, store) with this module's placement: each trial goes to the device
that takes it as a task holding the device's resource (``edgebench-target:<name>``: 1), so Ray itself never lets two
trials share a device, whoever submits them.  The driver chooses the device (pinned: the one the sweep names; spread:
the free device of the class that has waited longest), because only the driver knows which trial each device ran
last and so whether it cools down first.  Results come back as records and are stored as each trial ends.  A sweep
file's ``targets:`` axis is several sweeps (one per target) sharing one queue: a free device takes the first queued
trial whose own sweep's target accepts it.

Failure and interruption:
* a host that leaves mid-trial (its node dies) fails that task; its trial is stored ``crashed`` with the reason and
  the host's devices leave the pool, the rest of the sweep goes on; trials only that host could run stay unrun
  (``--resume`` runs them once it is back);
* Ctrl-C (or SIGTERM) on the driver cancels every running task -- each gets a KeyboardInterrupt on its host, where
  its frequency control restores the governor -- waits for them, stores none of them, and releases the claims.

Ray is imported only here, when ``--executor ray`` is asked for, with usage statistics off and its logs kept off
stdout.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from edgebench.errors import UsageError
from edgebench.fleet.devices import Device, devices_of_nodes
from edgebench.fleet.placement import candidates, placement_of
from edgebench.fleet.task import DeviceReply, DeviceRequest
from edgebench.host.lifetime import termination_as_interrupt
from edgebench.launch.trial import new_trial_id
from edgebench.measure.trial import failed_result
from edgebench.records.finished import FinishedTrial
from edgebench.records.result import TrialResult
from edgebench.store.sqlite import Claimant
from edgebench.sweep.execute import pending
from edgebench.sweep.job import SweepJob
from edgebench.sweep.plan import PlannedTrial
from edgebench.sweep.runner import Ended, Leg, Slot, Start, SweepLedger, SweepOutcome, run_legs, run_order
from edgebench.targets.ssh import check_host

INSTALL = "pip install 'edgebench[fleet]'"
#: Prefix of the Ray key-value entries where running sweeps publish their devices' trials and queue.
STATUS_KEY = "edgebench-fleet:"
#: How long a cancelled trial has to restore its device before the driver gives up waiting (s).
CANCEL_WAIT_S = 60.0
_POLL_S = 0.5


def import_ray(field: str = "--executor") -> Any:
    """Ray, with usage statistics off; without the extra, one line saying what to install."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise UsageError(field, f"the ray executor needs Ray: {INSTALL}") from None
    return ray


#: Seconds to wait for a cluster's address to answer at all (Ray itself retries for minutes).
CONNECT_TIMEOUT_S = 5.0


def check_reachable(address: str | None, field: str = "--address") -> None:
    """``HOST:PORT`` must name a host and a port that accepts a connection within :data:`CONNECT_TIMEOUT_S`: Ray's
    own client retries an address nothing listens on for minutes (``fleet status --address 127.0.0.1:1`` hung)."""
    if not address or address == "auto" or address.startswith("ray://"):
        return
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(field, f"{address!r} is not HOST:PORT (e.g. 10.0.0.5:6379) or auto")
    check_host(host.strip("[]"), field)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        why = f"no answer within {CONNECT_TIMEOUT_S:g} s" if isinstance(exc, TimeoutError) else exc.strerror
        raise UsageError(
            field,
            f"no Ray cluster at {address} ({why or type(exc).__name__}); start one with `edgebench fleet "
            "join` or give another --address HOST:PORT",
        ) from None


def connect(address: str | None, field: str = "--address") -> Any:
    """Join the cluster at ``address`` (``auto``: the one this host belongs to) as a driver; nothing on stdout."""
    check_reachable(address, field)  # before importing Ray (seconds): an address nothing answers at fails at once
    ray = import_ray()
    if ray.is_initialized():
        return ray
    _messages_to_stderr()
    # ray.init installs its own SIGTERM handler in the driver and never puts the old one back; the sweep decides
    # what SIGTERM does (stop between trials, restore the devices), so the handler it had is kept.
    sigterm = signal.getsignal(signal.SIGTERM)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            ray.init(
                address=address or "auto",
                logging_level=logging.ERROR,
                log_to_driver=False,
                namespace="edgebench",
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(
            field,
            f"no Ray cluster at {address or 'auto'} ({first}); start one with `edgebench fleet join` or give "
            "--address HOST:PORT",
        ) from None
    finally:
        signal.signal(signal.SIGTERM, sigterm)
    return ray


def _messages_to_stderr() -> None:
    """Ray prints the cluster's messages to a driver (a node marked dead...) on stdout from a thread of its own;
    edgebench's stdout carries tables and ``--json`` only, so those messages go to stderr."""
    with contextlib.suppress(ImportError, AttributeError):
        from ray._private import worker

        original = worker.print_to_stdstream
        if getattr(original, "_edgebench", False):
            return

        def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
            original({**data, "is_err": True}, ignore_prefix)

        to_stderr._edgebench = True  # type: ignore[attr-defined]
        worker.print_to_stdstream = to_stderr


def fleet_devices(ray: Any) -> list[Device]:
    return devices_of_nodes(ray.nodes())


def _run_task(request: DeviceRequest) -> DeviceReply:
    """The task body: imported on the host by reference, so the host runs its own edgebench install."""
    from edgebench.fleet.task import run_on_device

    return run_on_device(request)


class RayExecutor:
    def __init__(self, *, address: str | None = None) -> None:
        self.address = address
        self.ray = import_ray()

    def run(self, job: SweepJob) -> SweepOutcome:
        return self.run_each([job])[0]

    def run_each(self, jobs: list[SweepJob]) -> list[SweepOutcome]:
        """Several sweeps at once on one fleet -- a sweep file's ``targets:`` axis is one sweep per target, named as
        the local executor names them -- each trial on a free device its own sweep's target accepts.  Every sweep
        is checked (stored already? a device that takes it?) before any of them stores anything."""
        ray = connect(self.address)
        devices = fleet_devices(ray)
        claimant = Claimant.this_process()
        legs = []
        for job in jobs:
            _, todo = pending(job.plan, job.store, resume=job.resume, retry_failed=job.retry_failed)
            placement = placement_of(job.target)
            if todo and not candidates(placement, devices):
                offered = ", ".join(f"{d.name} ({d.device_class}, {d.host})" for d in devices) or "none"
                raise UsageError(
                    job.target_field,
                    f"no device of this Ray cluster is {placement.describe()} (it offers: {offered}); run "
                    "`edgebench fleet join --targets ...` on the host that owns it",
                )
            outcome = SweepOutcome(job.plan, skipped=len(job.plan.trials) - len(todo))
            ledger = SweepLedger(job.plan, job.store, job.reporter, job.cooldown, claimant, outcome, job.retry_failed)
            legs.append(Leg(ledger, todo, accepts=lambda slot, p=placement: p.accepts(slot.device),
                            where=placement.describe()))  # fmt: skip
        for job in jobs:
            job.store.add_sweep(job.plan.sweep_id, len(job.plan.trials), job.config_json)
        tasks = RayPlacement(ray, devices, claimant)
        try:
            with termination_as_interrupt():
                for leg in legs:
                    leg.ledger.reporter.begin(leg.plan, run_order(leg.plan, leg.todo), leg.ledger.outcome.skipped)
                run_legs(legs, tasks)
        except KeyboardInterrupt:
            for leg in legs:
                leg.ledger.outcome.interrupted = True
            tasks.cancel_all()
        finally:
            tasks.unpublish(legs)
            for ledger in {id(leg.ledger.store): leg.ledger for leg in legs}.values():  # once per store
                ledger.release()
        return [leg.ledger.outcome for leg in legs]


@dataclass
class _Running:
    start: Start
    device: Device


class RayPlacement:
    """The runner's placement on a Ray cluster: a free device is a slot (the longest idle first), a trial a task
    holding that device's resource; the driver watches the nodes, so a trial whose host left comes back ``crashed``,
    and publishes each device's trial and each sweep's queue for ``edgebench fleet status``."""

    def __init__(self, ray: Any, devices: list[Device], claimant: Claimant) -> None:
        self.ray, self.claimant = ray, claimant
        self.devices = {d.name: d for d in devices}
        self.running: dict[Any, _Running] = {}
        self.idle_c: dict[str, dict[str, float]] = {}
        self.free_since: dict[str, float] = dict.fromkeys(self.devices, 0.0)
        #: Ray nodes whose host left mid-trial: Ray's node table may list them alive for a while yet.
        self.gone: set[str] = set()
        self.task = ray.remote(num_cpus=0, max_retries=0)(_run_task)
        self._ended: list[Ended] = []

    def free(self) -> list[Slot]:
        busy = {r.device.name for r in self.running.values()}
        free = [d for d in self.devices.values() if d.name not in busy]
        return [Slot(d.name, d.host, d) for d in sorted(free, key=lambda d: (self.free_since[d.name], d.host, d.name))]

    def busy(self) -> bool:
        return bool(self.running or self._ended)

    def start(self, start: Start) -> None:
        device: Device = start.slot.device
        request = DeviceRequest(
            device=device.name,
            planned=start.planned,
            cooldown=start.leg.ledger.cooldown,
            cool_first=start.cool_first,
            idle_c=self.idle_c.get(device.name),
            context=start.context,
        )
        name = f"{device.name}: {start.planned.label}"
        ref = self.task.options(resources={device.resource: 1}, name=name).remote(request)
        self.running[ref] = _Running(start, device)
        start.leg.ledger.reporter.trial_started(start.planned, start.index)

    def wait(self, queued: list[tuple[Leg, PlannedTrial]]) -> list[Ended]:
        """The trials that came back (or whose host left) since; polls while one runs."""
        while self.running and not self._ended:
            self._publish(queued)
            ready, _ = self.ray.wait(list(self.running), num_returns=1, timeout=_POLL_S)
            for ref in ready:
                self._finish(ref)
            self._reap_lost()
        ended, self._ended = self._ended, []
        return ended

    def _finish(self, ref: Any) -> None:
        entry = self.running.pop(ref)
        try:
            reply: DeviceReply = self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self._end(entry, FinishedTrial(result=self._lost(entry, exc)))
        else:
            self.idle_c[entry.device.name] = reply.idle_c
            self._end(entry, reply.finished)

    def _reap_lost(self) -> None:
        """Trials whose host left the cluster: Ray may never fail a task leased on a dead node, so the driver
        watches the nodes itself and stores such a trial ``crashed`` (its task is cancelled should it linger)."""
        now = self._alive()
        for device in now:  # a host that joins mid-sweep takes trials too
            if device.name not in self.devices:
                self.devices[device.name] = device
                self.free_since.setdefault(device.name, 0.0)
        alive = {d.name for d in now}
        for ref, entry in list(self.running.items()):
            if entry.device.name in alive:
                continue
            del self.running[ref]
            with contextlib.suppress(Exception):
                self.ray.cancel(ref, force=True)
            self._end(entry, FinishedTrial(result=self._lost(entry, None)))

    def _end(self, entry: _Running, finished: FinishedTrial) -> None:
        self._ended.append(Ended(entry.start, finished))
        self.free_since[entry.device.name] = time.monotonic()

    def _lost(self, entry: _Running, exc: Exception | None) -> TrialResult:
        """A task that did not come back: its host left (node died), or the task failed outside the trial."""
        planned, device = entry.start.planned, entry.device
        # Ray may fail the task (NodeDiedError) before the cluster's table marks its node dead: the host left either way
        node_died = isinstance(exc, self.ray.exceptions.NodeDiedError)
        left = exc is None or node_died or device.name not in {d.name for d in self._alive()}
        if left and device.node_id:
            self.gone.add(device.node_id)
        alive = {d.name for d in self._alive()}
        for name in [n for n in self.devices if n not in alive]:  # a host that left takes its devices with it
            del self.devices[name]
            entry.start.leg.ledger.reporter.note(f"device {name} left the fleet")
        first = (str(exc or "").strip().splitlines() or [""])[0][:300]
        if left:
            how = f": {type(exc).__name__}" if exc is not None else " (its Ray node is gone)"
            reason = f"host {device.host} (device {device.name}) left the fleet mid-trial{how}"
        else:
            reason = f"the trial's task on {device.host} failed: {type(exc).__name__}: {first}".rstrip(": ")
        context = entry.start.context.model_copy(update={"target": device.spec})
        return failed_result(planned.trial, new_trial_id(), "crashed", reason, [], {}, context)

    def _alive(self) -> list[Device]:
        """The fleet's devices now, without those of hosts this sweep saw leave."""
        return [d for d in fleet_devices(self.ray) if d.node_id not in self.gone]

    def cancel_all(self) -> None:
        """Ctrl-C: every running task gets a KeyboardInterrupt on its host and restores its device; none is stored."""
        for ref in self.running:
            with contextlib.suppress(Exception):
                self.ray.cancel(ref)
        deadline = time.monotonic() + CANCEL_WAIT_S
        refs = list(self.running)
        while refs and time.monotonic() < deadline:
            _, refs = self.ray.wait(refs, num_returns=len(refs), timeout=1.0)
        self.running.clear()

    def _key(self, leg: Leg) -> str:
        return f"{STATUS_KEY}{leg.plan.sweep_id}:{self.claimant.owner}"

    def _publish(self, queued: list[tuple[Leg, PlannedTrial]]) -> None:
        """What ``edgebench fleet status`` shows: each device's trial and each sweep's queue."""
        legs = {id(r.start.leg): r.start.leg for r in self.running.values()} | {id(leg): leg for leg, _ in queued}
        for leg in legs.values():
            state = {
                "sweep": leg.plan.sweep_id,
                "driver": self.claimant.owner,
                "running": {r.device.name: r.start.planned.label for r in self.running.values() if r.start.leg is leg},
                "queued": [p.label for queued_leg, p in queued if queued_leg is leg],
            }
            with contextlib.suppress(Exception):  # status is a courtesy; a sweep never fails for it
                _kv()._internal_kv_put(self._key(leg), json.dumps(state), overwrite=True)

    def unpublish(self, legs: list[Leg]) -> None:
        for leg in legs:
            with contextlib.suppress(Exception):
                _kv()._internal_kv_del(self._key(leg))


def _kv() -> Any:
    """Ray's key-value store of the cluster (where ``fleet status`` finds what running sweeps publish)."""
    from ray.experimental import internal_kv

    return internal_kv


def published(ray: Any) -> Iterator[dict[str, Any]]:
    """Every running sweep's published state (``fleet status``)."""
    kv = _kv()
    for key in kv._internal_kv_list(STATUS_KEY):
        raw = kv._internal_kv_get(key)
        if raw:
            yield json.loads(raw)
