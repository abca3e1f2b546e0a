"""Intel/AMD RAPL energy counters through powercap: package, core, uncore, DRAM and platform (psys) domains.

Each domain's ``energy_uj`` is a cumulative counter in microjoules that wraps to 0 past ``max_energy_range_uj``
(minutes at full power on some CPUs): decoding unwraps it, so ``rapl_*_energy_uj`` columns only grow and energy over
any window is a difference.  Counters are better than power samples: nothing between two polls is missed.

Since Linux 5.10 (the PLATYPUS side channel, CVE-2020-8694) ``energy_uj`` is readable by root only; the sensor then
says so and how to grant access instead of reading nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import (
    Availability,
    CounterUnwrap,
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

_POWERCAP = "/sys/class/powercap"
GRANT_HINT = (
    "run edgebench as root, or let every user read the counters until the next boot: "
    f"sudo chmod a+r {_POWERCAP}/intel-rapl:*/energy_uj (a udev rule makes it permanent)"
)


@dataclass(frozen=True)
class RaplZone:
    """One powercap zone: ``intel-rapl:0`` is package 0, ``intel-rapl:0:1`` a subzone of it."""

    path: str
    name: str
    column: str
    scope: Scope
    max_energy_range_uj: int | None


def _scope(name: str, depth: int) -> Scope:
    # psys covers the whole platform; DRAM is outside the package domain even though powercap lists it below the
    # package; core (PP0) and uncore (PP1) lie inside their package.
    if name == "psys":
        return "total"
    if depth == 0 or name == "dram":
        return "part"
    return "sub"


def rapl_zones(sysfs: SysFS) -> list[RaplZone]:
    """Every ``intel-rapl:*`` zone with an energy counter, named after its package (``package_0_core``)."""
    zones: list[RaplZone] = []
    parents: dict[str, str] = {}
    # /sys/class/powercap lists subzones beside their packages (intel-rapl:0:0), so one glob finds them all.
    for path in sysfs.glob(f"{_POWERCAP}/intel-rapl:*"):
        if not sysfs.exists(f"{path}/energy_uj"):
            continue
        zone_id = path.rsplit("/", 1)[-1].removeprefix("intel-rapl:")
        name = sysfs.read_str(f"{path}/name") or f"zone-{zone_id}"
        parent_id, _, _ = zone_id.rpartition(":")
        if parent_id:
            name = f"{parents.get(parent_id, 'zone-' + parent_id)}/{name}"
        else:
            parents[zone_id] = name
        zones.append(
            RaplZone(
                path=path,
                name=name,
                column=f"rapl_{column_token(name)}_energy_uj",
                scope=_scope(name.rsplit("/", 1)[-1], zone_id.count(":")),
                max_energy_range_uj=sysfs.read_int(f"{path}/max_energy_range_uj"),
            )
        )
    return zones


class RaplSensor(Sensor):
    """``rapl_<domain>_energy_uj`` per powercap zone, unwrapped; power is its rate of change (``measure.power``)."""

    name = "rapl"

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self.zones: list[RaplZone] = []
        self._unwrap: list[CounterUnwrap] = []

    def available(self) -> Availability:
        zones = rapl_zones(self.sysfs)
        if not zones:
            return missing(
                f"no {_POWERCAP}/intel-rapl:* zones (not an Intel or AMD x86 CPU, a virtual machine, "
                "or the intel_rapl_msr module is not loaded: sudo modprobe intel_rapl_msr)"
            )
        status = readable(
            self.sysfs, f"{zones[0].path}/energy_uj", f"it is readable by root only since Linux 5.10; {GRANT_HINT}"
        )
        return status if status else missing(f"RAPL is present but {status.reason}")

    def open(self) -> tuple[str, ...]:
        self.zones = rapl_zones(self.sysfs)
        self._unwrap = [CounterUnwrap(z.max_energy_range_uj) for z in self.zones]
        return tuple(z.column for z in self.zones)

    def sources(self) -> list[Source]:
        return [Source(f"{z.path}/energy_uj", 32) for z in self.zones]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        return [unwrap(int_or_none(b)) for unwrap, b in zip(self._unwrap, blobs, strict=True)]

    def labels(self) -> dict[str, str]:
        return {z.column: f"RAPL {z.name}" for z in self.zones}

    def power_channels(self) -> list[PowerChannel]:
        return [PowerChannel(z.name, self.name, z.scope, energy_column=z.column) for z in self.zones]

    @property
    def wraps(self) -> int:
        """How many times a counter wrapped in what was decoded so far."""
        return sum(u.wraps for u in self._unwrap)
