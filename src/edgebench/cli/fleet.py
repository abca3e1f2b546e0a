"""``edgebench fleet join`` / ``fleet status``: a host offers its devices to a Ray cluster; see what runs where.

``join`` is ``ray start`` with the host's devices as custom resources (:mod:`edgebench.fleet.devices`): its own CPU
as ``local@<host>`` and each ``--targets`` device it reaches.  Ray's own output goes to stderr, so ``--json`` prints
only the JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from edgebench.errors import UsageError
from edgebench.markup import rich_text

app = typer.Typer(help="A fleet of devices on Ray: join a host, see what runs where.", no_args_is_help=True)


def _pairs(field: str, items: list[str]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        name, eq, value = item.partition("=")
        if not eq:
            name, value = item, item
        if not name or not value:
            raise UsageError(field, f"{item!r} must be NAME=VALUE")
        out.append((name, value))
    return out


def join(
    address: Annotated[
        str | None, typer.Option(help="The cluster's head HOST:PORT; without it this host starts one (the head).")
    ] = None,
    targets: Annotated[
        list[str] | None,
        typer.Option("--targets", help="A device this host reaches, NAME=SPEC (pixel-a=adb://SERIAL), repeatable."),
    ] = None,
    classes: Annotated[
        list[str] | None, typer.Option("--class", help="A device's class, NAME=CLASS (pixel-a=pixel7), repeatable.")
    ] = None,
    name: Annotated[str | None, typer.Option(help="This host's name in the fleet [default: its hostname].")] = None,
    port: Annotated[int, typer.Option(help="The head's port (when starting one).")] = 6379,
    num_cpus: Annotated[int | None, typer.Option(help="CPUs Ray may schedule here [default: all].")] = None,
    object_store_memory: Annotated[int | None, typer.Option(help="Ray's object store here (bytes).")] = None,
    temp_dir: Annotated[Path | None, typer.Option(help="Ray's session folder (head only).")] = None,
    sysfs_root: Annotated[
        Path | None, typer.Option(help="This host's CPU device reads this copy of /proc and /sys (tests).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print what was advertised as JSON.")] = False,
    ray_args: Annotated[list[str] | None, typer.Argument(help="More `ray start` options, after --.")] = None,
) -> int:
    """Start Ray on this host (`ray start`) advertising its devices: its CPU and the --targets it reaches."""
    from edgebench.fleet.devices import Device, check_name, encode_table, local_device, resources_of
    from edgebench.targets import open_target

    host = check_name("--name", name or socket.gethostname())
    devices = [local_device(host, str(sysfs_root or "/"))]
    device_class = dict(_pairs("--class", list(classes or [])))
    for device_name, spec in _pairs("--targets", list(targets or [])):
        check_name("--targets", device_name)
        try:
            open_target(spec)  # an unknown transport is refused here, not at the first trial
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
    resources = resources_of(devices, host)
    command = [ray, "start", "--resources", json.dumps(resources), "--disable-usage-stats"]
    if address is None:
        command += ["--head", f"--port={port}", "--include-dashboard=false"]
        if temp_dir is not None:
            command += [f"--temp-dir={temp_dir}"]
    else:
        command += [f"--address={address}"]
    if num_cpus is not None:
        command += [f"--num-cpus={num_cpus}"]
    if object_store_memory is not None:
        command += [f"--object-store-memory={object_store_memory}"]
    command += list(ray_args or [])
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "EDGEBENCH_FLEET_DEVICES": encode_table(devices)}
    done = subprocess.run(command, env=env, stdout=sys.stderr, stderr=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError("--address" if address else "fleet join", f"ray start failed ({last})")
    summary = {"host": host, "devices": [{"name": d.name, "class": d.device_class} for d in devices]}
    if json_out:
        print(json.dumps(summary))
    else:
        listed = ", ".join(f"{d.name} ({d.device_class})" for d in devices)
        print(f"{host} joined the fleet with {listed}")
    return 0


def status(
    address: Annotated[str | None, typer.Option(help="The cluster: auto (this host's) or HOST:PORT.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the devices and queues as JSON.")] = False,
) -> int:
    """The fleet's devices, what each is running, and each running sweep's queue."""
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
    if json_out:
        print(json.dumps({"devices": rows, "sweeps": queues}))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"fleet: {len(devices)} devices")
    for column in ("device", "class", "host", "running"):
        table.add_column(column)
    for row in rows:
        table.add_row(*map(rich_text, (row["device"], row["class"], row["host"], row["running"] or "idle")))
    console = Console()
    console.print(table)
    for q in queues:
        shown = ", ".join(q["queued"][:5]) + (" ..." if len(q["queued"]) > 5 else "")
        more = f": {shown}" if shown else ""
        console.print(rich_text(f"sweep {q['sweep']} ({q['driver']}): {len(q['queued'])} queued{more}"))
    return 0
