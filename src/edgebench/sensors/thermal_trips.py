"""A board's thermal state against its own trip points: what a device without Android's thermal service reports.

A phone says how hot it is in words (``dumpsys thermalservice``: moderate and above, it throttles).  A board (a
Jetson, a Raspberry Pi, an x86 laptop) has no such service; its kernel's thermal zones carry trip points instead,
and at a ``passive`` trip point the kernel's governor starts to hold the clocks down.  So a zone whose
temperature is at or above its first (lowest) passive trip point is throttling, whatever the sampled clocks show;
the launcher reads every zone before and after a trial (the readings travel in the bundle's environment) and the
hygiene check warns as it does for a phone's status.

The same trip points set the hot threshold of throttling detection (:func:`default_hot_c`), read with the
policies' reference clocks into the :class:`~edgebench.records.throttle.ThrottleReference` a trial or a monitoring
run is judged against (:func:`read_throttle_reference`); the detection itself, over recorded samples, is
:mod:`edgebench.measure.throttling`'s.
"""

from __future__ import annotations

from typing import Any

from edgebench.host.cpu import policy_limits
from edgebench.host.sysfs import SysFS
from edgebench.records.throttle import ThrottleReference
from edgebench.sensors.thermal import NOT_A_TEMPERATURE

#: Environment keys of the readings before and after the trial: lists of ``{zone, temp_c, passive_trip_c}``.
ENV_START = "thermal_trips_start"
ENV_END = "thermal_trips_end"
#: The hot threshold where the device has no passive trip point (degrees C).
DEFAULT_HOT_C = 70.0


def passive_trips_mc(sysfs: SysFS, zones: str) -> list[int]:
    """The ``passive`` trip points (millidegrees C, above 0) of the zones the glob ``zones`` names."""
    trips = []
    for type_file in sysfs.glob(f"{zones}/trip_point_*_type"):
        if sysfs.read_str(type_file) == "passive":
            temp = sysfs.read_int(type_file.removesuffix("_type") + "_temp")
            if temp is not None and temp > 0:
                trips.append(temp)
    return trips


def zone_trips(sysfs: SysFS) -> list[dict[str, Any]] | None:
    """Each thermal zone that has a passive trip point: its type, its temperature now and its lowest passive trip
    (degrees C).  None where the device has no zone with one (or its files cannot be read)."""
    out: list[dict[str, Any]] = []
    try:
        for zone in sysfs.glob("/sys/class/thermal/thermal_zone*"):
            kind = sysfs.read_str(f"{zone}/type") or zone.rsplit("/", 1)[-1]
            if kind in NOT_A_TEMPERATURE:
                continue
            trips = passive_trips_mc(sysfs, zone)
            temp_mc = sysfs.read_int(f"{zone}/temp")
            if trips and temp_mc is not None:
                out.append({"zone": kind, "temp_c": temp_mc / 1000, "passive_trip_c": min(trips) / 1000})
    except (OSError, ValueError):  # a zone that cannot be read (EAGAIN on some SoCs, a denied file)
        return out or None
    return out or None


def nearest_trip(readings: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """The zone closest to (or furthest past) its first passive trip point at one moment."""
    if not readings:
        return None
    return max(readings, key=lambda r: r["temp_c"] - r["passive_trip_c"])


def default_hot_c(sysfs: SysFS) -> float:
    """5 degrees below the lowest ``passive`` trip point of any thermal zone (where the kernel starts to cool the
    CPU), else :data:`DEFAULT_HOT_C`."""
    trips = passive_trips_mc(sysfs, "/sys/class/thermal/thermal_zone*")
    return min(trips) / 1000 - 5.0 if trips else DEFAULT_HOT_C


def read_throttle_reference(sysfs: SysFS, hot_c: float | None = None) -> ThrottleReference:
    """The policies' reference clocks now (:func:`~edgebench.host.cpu.policy_limits`), and ``hot_c`` (default:
    :func:`default_hot_c`): read before a trial heats the device, or when monitoring starts."""
    return ThrottleReference(tuple(policy_limits(sysfs)), hot_c if hot_c is not None else default_hot_c(sysfs))
