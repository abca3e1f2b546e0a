"""Temperatures from every thermal zone and hwmon ``temp*_input`` (milli-degrees C), not the battery alone."""

from __future__ import annotations

from dataclasses import dataclass

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import (
    Availability,
    Reading,
    Sensor,
    Source,
    column_token,
    int_or_none,
    missing,
    present,
)

#: Thermal zone types that hold a constant, not a temperature: left out so that no maximum, mean or throttling verdict
#: is taken from them.  Tegra TX-family ``PMIC-Die`` reads a fixed 100 °C (tegrastats' "PMIC@100C"; jetson-stats
#: skips it too).  Other PMIC zones (Qualcomm ``pm8150_tz``...) measure and are kept.
NOT_A_TEMPERATURE = frozenset({"PMIC-Die"})


@dataclass(frozen=True)
class TempSource:
    column: str
    label: str
    path: str


def temperature_sources(sysfs: SysFS) -> list[TempSource]:
    """Each temperature file with a column name built from the name the device gives it."""
    sources: list[TempSource] = []
    used: set[str] = set()

    def add(token: str, label: str, path: str) -> None:
        column, n = f"temp_{token}_mc", 2
        while column in used:
            column, n = f"temp_{token}_{n}_mc", n + 1
        used.add(column)
        sources.append(TempSource(column, label, path))

    zone_types: set[str] = set()
    for zone in sysfs.glob("/sys/class/thermal/thermal_zone*"):
        if sysfs.exists(f"{zone}/temp"):
            kind = sysfs.read_str(f"{zone}/type") or zone.rsplit("/", 1)[-1]
            zone_types.add(kind.replace("-", "_"))
            if kind in NOT_A_TEMPERATURE:
                continue
            add(column_token(kind), f"{kind} ({zone.rsplit('/', 1)[-1]})", f"{zone}/temp")
    for hwmon in sysfs.glob("/sys/class/hwmon/hwmon*"):
        chip = sysfs.read_str(f"{hwmon}/name") or hwmon.rsplit("/", 1)[-1]
        if chip in zone_types:
            continue  # the hwmon twin the kernel registers for a thermal zone ("cpu-thermal" -> "cpu_thermal")
        for temp in sysfs.glob(f"{hwmon}/temp*_input"):
            sensor = temp.rsplit("/", 1)[-1].removesuffix("_input")
            label = sysfs.read_str(temp.removesuffix("_input") + "_label") or sensor
            add(column_token(f"{chip}_{label}"), f"{chip} {label}", temp)
    return sources


class ThermalSensor(Sensor):
    """``temp_<name>_mc`` per zone and hwmon input; a failed read (some phones return EAGAIN) is ``None``."""

    name = "thermal"
    # Thermal zones update every 100-250 ms on most SoCs; faster polling reads the same value again.
    min_period_ms = 100.0

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self._temps: list[TempSource] = []

    def available(self) -> Availability:
        if not temperature_sources(self.sysfs):
            return missing("no /sys/class/thermal/thermal_zone*/temp or /sys/class/hwmon/*/temp*_input")
        return present()

    def open(self) -> tuple[str, ...]:
        self._temps = temperature_sources(self.sysfs)
        return tuple(t.column for t in self._temps)

    def sources(self) -> list[Source]:
        return [Source(t.path, 32) for t in self._temps]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        return [int_or_none(b) for b in blobs]

    def labels(self) -> dict[str, str]:
        return {t.column: t.label for t in self._temps}
