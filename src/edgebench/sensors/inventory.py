"""What sensors a device has, a live reading of each, and why the others are missing (``edgebench sensors``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from edgebench.host.sysfs import SysFS
from edgebench.registry import SENSORS
from edgebench.sensors.base import Sensor

#: How long to wait between two readings of an energy counter to show a power figure.
COUNTER_GAP_S = 0.25


@dataclass(frozen=True)
class PowerReading:
    name: str
    scope: str
    power_w: float | None
    method: str


@dataclass(frozen=True)
class SensorReport:
    name: str
    available: bool
    reason: str = ""
    min_period_ms: float = 0.0
    values: dict[str, int | float | None] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    power: list[PowerReading] = field(default_factory=list)


def _power(sensor: Sensor, first: dict[str, int | float | None], t_first: float, live: bool) -> list[PowerReading]:
    channels = sensor.power_channels()
    if not channels:
        return []
    second, t_second = first, t_first
    if live and any(c.energy_column for c in channels):
        time.sleep(COUNTER_GAP_S)
        second, t_second = dict(zip(first, sensor.read(), strict=True)), time.perf_counter()
    out = []
    for c in channels:
        watts, how = None, "power reading"
        if c.energy_column:
            a, b = first.get(c.energy_column), second.get(c.energy_column)
            how = f"energy counter over {COUNTER_GAP_S:g} s" if live else "energy counter (needs a live device)"
            if live and a is not None and b is not None and t_second > t_first:
                watts = (b - a) * c.energy_unit_j / (t_second - t_first)
        if watts is None and c.power_column and first.get(c.power_column) is not None:
            watts, how = first[c.power_column] / 1e3, "power reading"  # type: ignore[operator]
        out.append(PowerReading(c.name, c.scope, watts, how))
    return out


def inventory(sysfs: SysFS, pid: int | None = None) -> list[SensorReport]:
    """Every registered sensor: its availability (with the reason), one reading, and power in watts."""
    reports = []
    for name in SENSORS.names():
        sensor: Sensor = SENSORS.load(name)(sysfs, pid=pid)
        status = sensor.available()
        if not status:
            reports.append(SensorReport(name, False, status.reason))
            continue
        try:
            columns = sensor.open()
            t_first = time.perf_counter()
            values = dict(zip(columns, sensor.read(), strict=True))
        except OSError as exc:
            reports.append(SensorReport(name, False, f"listed but cannot be read: {exc}"))
            continue
        power = _power(sensor, values, t_first, sysfs.is_live)
        reports.append(SensorReport(name, True, "", sensor.min_period_ms, values, sensor.labels(), power))
    return reports
