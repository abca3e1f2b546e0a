"""A fleet of devices on Ray: a host joins the cluster (``ray start``) advertising its devices as custom resources
(its own CPU as ``local@<host>`` and each target it reaches, :mod:`edgebench.fleet.devices`); the fleet's status
lists every device, what it runs, and each running sweep's queue."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgebench.errors import UsageError
from edgebench.workflows.common import Notify, quiet


@dataclass(frozen=True)
class JoinRequest:
    """The head to join (None: this host starts one), the devices this host reaches (``NAME=SPEC``) and their classes
    (``NAME=CLASS``), this host's name, and what ``ray start`` is given (port, CPUs, object store, session folder,
    more arguments)."""

    address: str | None = None
    targets: Sequence[str] = ()
    classes: Sequence[str] = ()
    name: str | None = None
    port: int = 6379
    num_cpus: int | None = None
    object_store_memory: int | None = None
    temp_dir: Path | None = None
    sysfs_root: Path | None = None
    ray_args: Sequence[str] = ()


@dataclass(frozen=True)
class Joined:
    """The host's name in the fleet and the devices it advertised, as ``{"name", "class"}``."""

    host: str
    devices: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class FleetStatus:
    """Every device (name, class, host, busy, what it runs) and each running sweep's queue (sweep, driver, queued)."""

    devices: list[dict[str, Any]]
    sweeps: list[dict[str, Any]]


def _pairs(field_name: str, items: Sequence[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        name, eq, value = item.partition("=")
        if not eq:
            name, value = item, item
        if not name or not value:
            raise UsageError(field_name, f"{item!r} must be NAME=VALUE")
        out.append((name, value))
    return out


def join_fleet(request: JoinRequest, *, notify: Notify = quiet) -> Joined:
    """Check every device this host offers (an unknown transport is refused here, not at the first trial), then
    start Ray on this host advertising them.  Ray's own output goes to stderr; where ``ray start`` fails, what it
    said goes to ``notify`` before the one-line error."""
    from edgebench.fleet.devices import Device, check_name, encode_table, local_device, resources_of
    from edgebench.targets import open_target

    r = request
    host = check_name("--name", r.name or socket.gethostname())
    devices = [local_device(host, str(r.sysfs_root or "/"))]
    device_class = dict(_pairs("--class", r.classes))
    for device_name, spec in _pairs("--targets", r.targets):
        check_name("--targets", device_name)
        try:
            open_target(spec)
        except Exception as exc:
            raise UsageError("--targets", f"{device_name}: cannot open {spec} ({exc})") from None
        devices.append(Device(device_name, check_name("--class", device_class.get(device_name, device_name)), host,
                              spec))  # fmt: skip
    unknown = sorted(set(device_class) - {d.name for d in devices})
    if unknown:
        raise UsageError("--class", f"names {', '.join(unknown)}, which --targets does not")
    ray = shutil.which("ray")
    if ray is None:
        raise UsageError("fleet join", "needs Ray's `ray` command: pip install 'edgebench[fleet]'")
    command = [ray, "start", "--resources", json.dumps(resources_of(devices, host)), "--disable-usage-stats"]
    if r.address is None:
        command += ["--head", f"--port={r.port}", "--include-dashboard=false"]
        command += [f"--temp-dir={r.temp_dir}"] if r.temp_dir is not None else []
    else:
        command += [f"--address={r.address}"]
    command += [f"--num-cpus={r.num_cpus}"] if r.num_cpus is not None else []
    command += [f"--object-store-memory={r.object_store_memory}"] if r.object_store_memory is not None else []
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "EDGEBENCH_FLEET_DEVICES": encode_table(devices)}
    done = subprocess.run([*command, *r.ray_args], env=env, stdout=sys.stderr, stderr=subprocess.PIPE, text=True,
                          check=False)  # fmt: skip
    if done.returncode != 0:
        if done.stderr:
            notify(done.stderr.rstrip("\n"))
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError("--address" if r.address else "fleet join", f"ray start failed ({last})")
    return Joined(host, [{"name": d.name, "class": d.device_class} for d in devices])


def fleet_status(address: str | None = None) -> FleetStatus:
    """The fleet's devices, which are busy and with what (a trial of this cluster's sweeps, or another driver's),
    and each published sweep's queue."""
    from edgebench.fleet.raycluster import connect, fleet_devices, published

    ray = connect(address)
    devices = fleet_devices(ray)
    sweeps = list(published(ray))
    available = ray.available_resources()
    running = {device: f"{s['sweep']}: {label}" for s in sweeps for device, label in s["running"].items()}
    rows: list[dict[str, Any]] = []
    for d in devices:
        busy = available.get(d.resource, 0) < 1
        rows.append({"device": d.name, "class": d.device_class, "host": d.host, "busy": busy,
                     "running": running.get(d.name, "(another driver's trial)" if busy else None)})  # fmt: skip
    queues = [{"sweep": s["sweep"], "driver": s["driver"], "queued": s["queued"]} for s in sweeps]
    return FleetStatus(rows, queues)
