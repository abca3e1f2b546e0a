"""``edgebench sensors``: what this device (or a tree copied from one) can measure, a reading of each, and why
the rest is missing."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import JsonOption, RootOption, TargetOption


def sensors(
    as_json: JsonOption = False,
    sysfs_root_dir: Annotated[
        Path | None, typer.Option("--sysfs-root", help="Read a tree copied from a device instead of /.")
    ] = None,
    pid: Annotated[
        int | None, typer.Option(help="Process for the process sensors [default: this one on a live device].")
    ] = None,
    target_spec: TargetOption = None,
    root: RootOption = False,
) -> int:
    """List the sensors this device has, a live reading of each, and what is missing and why."""
    from edgebench.config.flags import sysfs_root
    from edgebench.workflows.device import sensor_inventory

    found = sensor_inventory(target_spec, sysfs_root=sysfs_root(sysfs_root_dir), root=root, pid=pid)
    if as_json:
        doc = {"target": found.target, "sysfs_root": found.sysfs_root, "pid": found.pid,
               "sensors": [asdict(r) for r in found.sensors]}  # fmt: skip
        typer.echo(json.dumps(doc, indent=2))
        return 0
    from edgebench.report.sensors import print_sensors

    print_sensors(f"sensors on {found.sysfs_root if found.target == 'local' else found.target}", found.sensors)
    return 0
