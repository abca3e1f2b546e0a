"""``edgebench sensors``: what this device (or a tree copied from one) can measure, a reading of each, and why
the rest is missing."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import JsonOption, RootOption, TargetOption, sysfs_root
from edgebench.markup import rich_text
from edgebench.units import MIB

#: column suffix -> (display unit, factor from the stored unit)
_DISPLAY = {
    "_freq_khz": ("MHz", 1e-3),
    "_mc": ("°C", 1e-3),
    "_bytes": ("MiB", 1 / MIB),
    "_power_mw": ("W", 1e-3),
    "_energy_uj": ("J", 1e-6),
    "_energy_mj": ("J", 1e-3),
    "_uv": ("V", 1e-6),
    "_ua": ("mA", 1e-3),
    "_voltage_mv": ("V", 1e-3),
    "_current_ma": ("mA", 1.0),
    "_permille": ("%", 0.1),
    "_pct": ("%", 1.0),
    "_ticks": ("ticks", 1.0),
}
_MAX_SHOWN = 12


def _format(column: str, value: int | float | None) -> str:
    if value is None:
        return f"{column}=-"
    for suffix, (unit, factor) in _DISPLAY.items():
        if column.endswith(suffix):
            shown = value * factor
            text = f"{shown:.0f}" if unit == "ticks" or abs(shown) >= 100 else f"{shown:.3g}"
            return f"{column.removesuffix(suffix)} {text} {unit}"
    return f"{column}={value}"


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
    from edgebench.sensors.inventory import inventory
    from edgebench.targets import open_target

    target = open_target(target_spec, sysfs_root=sysfs_root(sysfs_root_dir), root=root or None)
    fs = target.sysfs()
    if pid is None and fs.is_live:
        pid = os.getpid()
    reports = inventory(fs, pid)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "target": target.name,
                    "sysfs_root": str(fs.root),
                    "pid": pid,
                    "sensors": [asdict(r) for r in reports],
                },
                indent=2,
            )
        )
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=rich_text(f"sensors on {fs.root if target.name == 'local' else target.name}"), title_justify="left"
    )
    table.add_column("sensor", style="bold")
    table.add_column("status")
    table.add_column("reading")
    for r in reports:
        if not r.available:
            table.add_row(rich_text(r.name), "[yellow]missing[/yellow]", rich_text(r.reason))
            continue
        cells = [_format(c, v) for c, v in r.values.items()]
        if len(cells) > _MAX_SHOWN:
            cells = [*cells[:_MAX_SHOWN], f"... (+{len(cells) - _MAX_SHOWN} more)"]
        lines = [", ".join(cells)]
        for p in r.power:
            watts = "-" if p.power_w is None else f"{p.power_w:.3f} W"
            lines.append(f"power {p.name} ({p.scope}): {watts} from {p.method}")
        period = f" every {r.min_period_ms:g} ms" if r.min_period_ms else ""
        table.add_row(rich_text(r.name), f"[green]ok[/green]{period}", rich_text("\n".join(lines)))
    Console().print(table)
    return 0
