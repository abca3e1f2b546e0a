"""``edgebench fleet join`` / ``fleet status``: a host offers its devices to a Ray cluster; see what runs where.

``join`` is ``ray start`` with the host's devices as custom resources (:mod:`edgebench.fleet.devices`): its own CPU
as ``local@<host>`` and each ``--targets`` device it reaches.  Ray's own output goes to stderr, so ``--json`` prints
only the JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import say

app = typer.Typer(help="A fleet of devices on Ray: join a host, see what runs where.", no_args_is_help=True)


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
    from edgebench.workflows.fleet import JoinRequest, join_fleet

    request = JoinRequest(address, targets or [], classes or [], name, port, num_cpus, object_store_memory, temp_dir,
                          sysfs_root, ray_args or [])  # fmt: skip
    joined = join_fleet(request, notify=say)
    if json_out:
        print(json.dumps({"host": joined.host, "devices": joined.devices}))
    else:
        listed = ", ".join(f"{d['name']} ({d['class']})" for d in joined.devices)
        print(f"{joined.host} joined the fleet with {listed}")
    return 0


def status(
    address: Annotated[str | None, typer.Option(help="The cluster: auto (this host's) or HOST:PORT.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the devices and queues as JSON.")] = False,
) -> int:
    """The fleet's devices, what each is running, and each running sweep's queue."""
    from rich.console import Console
    from rich.table import Table

    from edgebench.markup import rich_text
    from edgebench.workflows.fleet import fleet_status

    found = fleet_status(address)
    if json_out:
        print(json.dumps({"devices": found.devices, "sweeps": found.sweeps}))
        return 0
    table = Table(title=f"fleet: {len(found.devices)} devices")
    for column in ("device", "class", "host", "running"):
        table.add_column(column)
    for row in found.devices:
        table.add_row(*map(rich_text, (row["device"], row["class"], row["host"], row["running"] or "idle")))
    console = Console()
    console.print(table)
    for q in found.sweeps:
        shown = ", ".join(q["queued"][:5]) + (" ..." if len(q["queued"]) > 5 else "")
        more = f": {shown}" if shown else ""
        console.print(rich_text(f"sweep {q['sweep']} ({q['driver']}): {len(q['queued'])} queued{more}"))
    return 0
