"""A board's thermal state (no Android thermal service): every thermal zone's temperature against its first passive
trip point; at or above it, the hygiene line warns as a phone's status does (trials: tests/e2e/launch/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from edgebench.host.sysfs import SysFS
from edgebench.measure.hygiene import warning_line
from edgebench.records.result import Hygiene, ZoneTrip
from edgebench.sensors.thermal_trips import default_hot_c, nearest_trip, read_throttle_reference, zone_trips
from tests.paths import FIXTURES

SYSFS_TREES = FIXTURES / "sysfs"


def _orin(tmp_path: Path, cpu_mc: int) -> Path:
    """The Jetson Orin tree with its cpu-thermal zone (passive trip 99 °C) at ``cpu_mc``."""
    tree = tmp_path / "orin"
    shutil.copytree(SYSFS_TREES / "jetson_orin", tree)
    (tree / "sys/class/thermal/thermal_zone0/temp").write_text(f"{cpu_mc}\n")
    return tree


def test_zones_are_read_against_their_lowest_passive_trip(tmp_path):
    readings = zone_trips(SysFS(_orin(tmp_path, 99_500)))
    assert readings is not None
    cpu = next(r for r in readings if r["zone"] == "cpu-thermal")
    assert cpu == {"zone": "cpu-thermal", "temp_c": 99.5, "passive_trip_c": 99.0}  # not the critical one, 102.5
    assert nearest_trip(readings) == cpu
    assert zone_trips(SysFS(SYSFS_TREES / "rpi4")) is None  # a tree whose zones have no trip points


def test_the_warning_names_the_zone_at_its_passive_trip():
    cool = ZoneTrip(zone="cpu-thermal", temp_c=60.0, passive_trip_c=99.0)
    hot = ZoneTrip(zone="cpu-thermal", temp_c=99.0, passive_trip_c=99.0)  # at the trip: the governor acts
    assert warning_line(Hygiene(zone_trip_start=cool, zone_trip_end=cool), [0]) is None
    line = warning_line(Hygiene(zone_trip_start=cool, zone_trip_end=hot), [0])
    assert line == (
        "thermal zone cpu-thermal was at 99.0 °C at the trial's end, at or above its first passive trip point "
        "(99.0 °C): the kernel throttles"
    )


def test_hot_threshold_from_the_device(sysfs_tree):
    """5 degrees below the lowest passive trip point: what throttling detection calls hot on this device."""
    tx2 = SysFS(sysfs_tree("jetson_tx2"))
    assert default_hot_c(tx2) == pytest.approx(96.5 - 5)
    assert default_hot_c(SysFS(sysfs_tree("intel_laptop"))) == pytest.approx(95.0 - 5)  # passive 0 is ignored
    assert default_hot_c(SysFS(sysfs_tree("rpi4"))) == 70.0  # no trip points in the tree


def test_the_throttle_reference_is_the_clocks_now_and_the_hot_threshold(sysfs_tree):
    tx2 = SysFS(sysfs_tree("jetson_tx2"))
    reference = read_throttle_reference(tx2)
    assert [(p.name, p.max_khz) for p in reference.policies] == [("policy0", 2035200), ("policy1", 2035200)]
    assert reference.hot_c == pytest.approx(96.5 - 5)
    assert read_throttle_reference(tx2, hot_c=60.0).hot_c == 60.0  # a threshold given (MonitorConfig.hot_c)
