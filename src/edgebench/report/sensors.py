"""What ``edgebench sensors`` prints: each sensor of the device, its status, and a reading of each value in the
unit a reader expects (MHz, °C, W, J, ...) converted from the unit it is stored in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from edgebench.markup import rich_text
from edgebench.units import MIB

if TYPE_CHECKING:
    from edgebench.sensors.inventory import SensorReport

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


def print_sensors(title: str, reports: list[SensorReport]) -> None:
    """The table: one row per sensor, ok (every how often it can be read) with its readings, or missing and why."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=rich_text(title), title_justify="left")
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
