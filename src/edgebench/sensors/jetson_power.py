"""Jetson power rails from the boards' INA3221 monitors, in both layouts the kernels expose.

* L4T 32 and older (TX1, TX2, Nano, Xavier): the ``ina3221x`` iio driver,
  ``/sys/bus/i2c/drivers/ina3221x/<bus>-<addr>/iio:device<N>/{rail_name_<c>, in_power<c>_input}``, power in mW
  computed by the driver.
* L4T 34 and newer (Orin, and Xavier on JetPack 5): the upstream ``ina3221`` hwmon driver,
  ``/sys/bus/i2c/drivers/ina3221/<bus>-<addr>/hwmon/hwmon<N>/{in<c>_label, in<c>_input (mV), curr<c>_input (mA)}``
  for channels 1-3; power is ``V * I``, computed when decoding.

Each rail becomes ``rail_<name>_power_mw`` (the hwmon layout adds ``_voltage_mv`` and ``_current_ma``).  The
device's total is the module's input rail alone (``VDD_IN``, ``POM_5V_IN``, ``5V_IN``), and the module's rails
(``VDD_SYS_CPU``, ``VDD_SYS_GPU``, ``VDD_SYS_DDR``, ``VDD_SOC``...) lie inside it.  A TX1/TX2 developer kit's carrier
board also reports its own input, ``VDD_MUX``; it is shown as a rail and never added to the total.  NVIDIA's
documents name the two inputs together ("the main supply (VDD_MUX/VDD_IN)", Jetson TX2/TX2i OEM Product Design
Guide, power chapter) without saying whether VDD_MUX's shunt sits before the branch to the module (then it holds
VDD_IN, and a sum counts the module twice) or beside it (energymon reads them as parallel and sums them).  jtop and
tegrastats take VDD_IN alone as the total (jtop's ``total_power``: VDD_IN or POM_5V_IN, never VDD_MUX), and so does
edgebench: the figure is the module's, labelled ``VDD_IN``, and never a double count.  Boards without an input
rail (AGX Xavier, AGX Orin) measure the total as the sum of their rails.  Channels labelled ``NC`` are not
connected and are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import (
    Availability,
    PowerChannel,
    Reading,
    Scope,
    Sensor,
    Source,
    column_token,
    int_or_none,
    missing,
    readable,
)

IIO_DRIVER = "/sys/bus/i2c/drivers/ina3221x"
HWMON_DRIVER = "/sys/bus/i2c/drivers/ina3221"
#: Rails that measure what the module draws from its supply: the device's total.
INPUT_RAILS = frozenset({"VDD_IN", "POM_5V_IN", "5V_IN"})
_IIO_RAIL = re.compile(r"rail_name_(\d+)$")
_HWMON_LABEL = re.compile(r"in([123])_label$")


@dataclass(frozen=True)
class Rail:
    name: str
    token: str
    #: ``(power_mw,)`` for the iio layout, ``(voltage_mv, current_ma)`` for hwmon
    paths: tuple[str, ...]
    layout: str

    @property
    def power_column(self) -> str:
        return f"rail_{self.token}_power_mw"


def iio_rails(sysfs: SysFS) -> list[Rail]:
    rails = []
    for device in sysfs.glob(f"{IIO_DRIVER}/*/iio:device*"):
        for name_file in sysfs.glob(f"{device}/rail_name_*"):
            channel = _IIO_RAIL.search(name_file)
            name = sysfs.read_str(name_file)
            power = f"{device}/in_power{channel.group(1)}_input" if channel else ""
            if channel and name and name != "NC" and sysfs.exists(power):
                rails.append(Rail(name, column_token(name), (power,), "iio"))
    return rails


def hwmon_rails(sysfs: SysFS) -> list[Rail]:
    rails = []
    for hwmon in sysfs.glob(f"{HWMON_DRIVER}/*/hwmon/hwmon*"):
        for label_file in sysfs.glob(f"{hwmon}/in*_label"):
            channel = _HWMON_LABEL.search(label_file)
            name = sysfs.read_str(label_file)
            if not channel or not name or name == "NC":
                continue
            c = channel.group(1)
            voltage, current = f"{hwmon}/in{c}_input", f"{hwmon}/curr{c}_input"
            if sysfs.exists(voltage) and sysfs.exists(current):
                rails.append(Rail(name, column_token(name), (voltage, current), "hwmon"))
    return rails


def _unique(rails: list[Rail]) -> list[Rail]:
    """Two chips can label a channel alike; the second gets a numbered column rather than overwriting the first."""
    seen: dict[str, int] = {}
    out = []
    for rail in rails:
        n = seen.get(rail.token, 0) + 1
        seen[rail.token] = n
        out.append(rail if n == 1 else Rail(f"{rail.name} ({n})", f"{rail.token}_{n}", rail.paths, rail.layout))
    return out


class JetsonPowerSensor(Sensor):
    """``rail_<name>_power_mw`` for every connected INA3221 channel of a Jetson board."""

    name = "jetson_power"

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self.rails: list[Rail] = []

    def _discover(self) -> list[Rail]:
        return _unique(iio_rails(self.sysfs) + hwmon_rails(self.sysfs))

    def available(self) -> Availability:
        rails = self._discover()
        if not rails:
            return missing(f"no INA3221 power monitor under {IIO_DRIVER} or {HWMON_DRIVER} (not a Jetson board)")
        return readable(self.sysfs, rails[0].paths[0], "run edgebench as root (or in the i2c group)")

    def open(self) -> tuple[str, ...]:
        self.rails = self._discover()
        columns: list[str] = []
        for rail in self.rails:
            columns.append(rail.power_column)
            if rail.layout == "hwmon":
                columns += [f"rail_{rail.token}_voltage_mv", f"rail_{rail.token}_current_ma"]
        return tuple(columns)

    def sources(self) -> list[Source]:
        return [Source(path, 32) for rail in self.rails for path in rail.paths]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        out: Reading = []
        i = 0
        for rail in self.rails:
            if rail.layout == "iio":
                out.append(int_or_none(blobs[i]))
                i += 1
                continue
            mv, ma = int_or_none(blobs[i]), int_or_none(blobs[i + 1])
            i += 2
            out += [None if mv is None or ma is None else round(mv * ma / 1000), mv, ma]
        return out

    def labels(self) -> dict[str, str]:
        return {rail.power_column: f"{rail.name} (INA3221)" for rail in self.rails}

    def power_channels(self) -> list[PowerChannel]:
        has_input = any(rail.name in INPUT_RAILS for rail in self.rails)
        channels = []
        for rail in self.rails:
            scope: Scope = "total" if rail.name in INPUT_RAILS else "sub" if has_input else "part"
            channels.append(PowerChannel(rail.name, self.name, scope, power_column=rail.power_column))
        return channels
