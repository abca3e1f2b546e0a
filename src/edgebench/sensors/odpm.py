"""Pixel 6 and later: the On-Device Power Monitor (ODPM) of the Samsung S2MPG1x PMICs, energy counters per rail.

Google's ``odpm`` iio driver (``drivers/iio/power/odpm.c`` of the gs101/gs201 kernels) gives each PMIC an iio
device (``name`` ``s2mpg10-odpm`` for the main PMIC, ``s2mpg11-odpm`` for the sub PMIC) with eight channels, each
measuring one rail picked from the PMIC's rails.  Its files, as the driver prints them:

* ``enabled_rails``: ``CH<n>[<schematic name>]:<subsystem>`` per enabled channel (``CH3[S2M_VDD_CPUCL2]:CPU(BIG)``);
* ``energy_value``: ``t=<ms since boot of the reading>`` then ``CH<n>(T=<ms measured>)[<schematic name>], <energy>``
  per channel, the energy accumulated since the measurement started in microwatt-seconds (= microjoules), a u64
  that does not wrap.

Reading ``energy_value`` refreshes the counters from the PMIC when the last refresh is older than the driver's
minimum (50 ms in the gs101 driver); a faster poll gets the same values again.  Perfetto's ``android.power`` data
source reads the same rails through the power-stats HAL.  A channel switched to another rail at run time (writing
``CH<n>=<rail>`` to ``enabled_rails``) restarts from 0 under a new name: its readings then no longer match the
opened rail and are left empty rather than read as a drop.  SELinux keeps the files from the unrooted shell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import (
    Availability,
    PowerChannel,
    Reading,
    Sensor,
    Source,
    column_token,
    missing,
    readable,
)

_IIO = "/sys/bus/iio/devices"
_ENABLED = re.compile(r"^CH(\d+)\[([^\]]*)\]:(.*)$")
_ENERGY = re.compile(r"^CH(\d+)\(T=(\d+)\)\[([^\]]*)\], (\d+)$")
#: ``energy_value`` of eight channels with long schematic names stays well under this.
_MAX_BYTES = 1024


@dataclass(frozen=True)
class OdpmRail:
    """One enabled channel: its PMIC's iio folder, channel number, schematic name and subsystem."""

    device: str
    channel: int
    schematic: str
    subsystem: str

    @property
    def column(self) -> str:
        return f"odpm_{column_token(self.schematic)}_energy_uj"


def odpm_devices(sysfs: SysFS) -> list[str]:
    """The iio folders with the ODPM's ``energy_value`` and ``enabled_rails`` files."""
    return [
        path
        for path in sysfs.glob(f"{_IIO}/iio:device*")
        if sysfs.exists(f"{path}/energy_value") and sysfs.exists(f"{path}/enabled_rails")
    ]


def parse_enabled_rails(text: str, device: str) -> list[OdpmRail]:
    """``enabled_rails`` as the driver prints it (``CH%d[%s]:%s``)."""
    rails = []
    for line in text.splitlines():
        found = _ENABLED.match(line.strip())
        if found:
            rails.append(OdpmRail(device, int(found[1]), found[2], found[3]))
    return rails


def parse_energy_value(text: str) -> dict[int, tuple[str, int]]:
    """``energy_value`` as the driver prints it: ``{channel: (schematic name, microjoules)}`` (the ``t=`` line and
    the per-channel durations are not needed: the sampler stamps each reading itself)."""
    out = {}
    for line in text.splitlines():
        found = _ENERGY.match(line.strip())
        if found:
            out[int(found[1])] = (found[3], int(found[4]))
    return out


def odpm_rails(sysfs: SysFS) -> list[OdpmRail]:
    rails: list[OdpmRail] = []
    for device in odpm_devices(sysfs):
        try:
            rails += parse_enabled_rails(sysfs.read_text(f"{device}/enabled_rails"), device)
        except OSError:
            continue
    return rails


class OdpmSensor(Sensor):
    """``odpm_<rail>_energy_uj`` per enabled ODPM channel: cumulative counters, power is their rate of change."""

    name = "odpm"

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self.devices: list[str] = []
        self.rails: list[OdpmRail] = []

    def available(self) -> Availability:
        devices = odpm_devices(self.sysfs)
        if not devices:
            return missing(f"no ODPM iio device (energy_value, enabled_rails) under {_IIO} (not a Pixel 6 or later)")
        status = readable(self.sysfs, f"{devices[0]}/energy_value", "run as root (adb root on a userdebug build)")
        if not status:
            return missing(f"the ODPM is present but {status.reason}")
        if not odpm_rails(self.sysfs):
            return missing("the ODPM lists no enabled rail in enabled_rails")
        return status

    def open(self) -> tuple[str, ...]:
        self.rails = odpm_rails(self.sysfs)
        self.devices = list(dict.fromkeys(r.device for r in self.rails))
        return tuple(r.column for r in self.rails)

    def sources(self) -> list[Source]:
        return [Source(f"{d}/energy_value", _MAX_BYTES) for d in self.devices]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        read = {
            device: parse_energy_value(blob.decode(errors="replace")) if blob is not None else {}
            for device, blob in zip(self.devices, blobs, strict=True)
        }
        out: Reading = []
        for rail in self.rails:
            name, value = read[rail.device].get(rail.channel, ("", 0))
            out.append(value if name == rail.schematic else None)  # another rail now: not this counter
        return out

    def labels(self) -> dict[str, str]:
        return {r.column: f"ODPM {r.subsystem} ({r.schematic})" for r in self.rails}

    def power_channels(self) -> list[PowerChannel]:
        # the rails do not overlap (each PMIC output is measured once) but do not cover the whole phone (battery
        # losses, unmeasured rails): they add up to the device's figure only where no total (the fuel gauge) exists
        return [PowerChannel(r.schematic, self.name, "part", energy_column=r.column) for r in self.rails]
