"""A board's thermal zones read against their passive trip points before and after a real trial, locally and over
SSH (the reading and the warning's words: tests/unit/sensors/test_thermal_trips.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from edgebench.launch.trial import run_trial
from edgebench.records.result import ZoneTrip
from edgebench.records.trial import Trial
from edgebench.targets.local import LocalTarget
from tests.paths import FIXTURES
from tests.sshd import board, sshd  # noqa: F401  (the fixtures)

SYSFS_TREES = FIXTURES / "sysfs"


def _orin(tmp_path: Path, cpu_mc: int) -> Path:
    """The Jetson Orin tree with its cpu-thermal zone (passive trip 99 °C) at ``cpu_mc``."""
    tree = tmp_path / "orin"
    shutil.copytree(SYSFS_TREES / "jetson_orin", tree)
    (tree / "sys/class/thermal/thermal_zone0/temp").write_text(f"{cpu_mc}\n")
    return tree


def _command(**extra) -> Trial:
    fields = {"command": "for i in 1 2 3; do echo step $i; done", "step_pattern": r"^step \d+$", "steps": 2,
              "warmup": 1, "idle_s": 0}  # fmt: skip
    return Trial(**{**fields, **extra})


def test_a_board_at_its_trip_point_gets_the_hygiene_warning(tmp_path):
    hot = run_trial(_command(), target=LocalTarget(_orin(tmp_path / "a", 100_000))).result
    assert hot.ok, hot.reason
    assert hot.hygiene.zone_trip_start == ZoneTrip(zone="cpu-thermal", temp_c=100.0, passive_trip_c=99.0)
    assert hot.hygiene.warning and "thermal zone cpu-thermal was at 100.0 °C" in hot.hygiene.warning
    cool = run_trial(_command(), target=LocalTarget(_orin(tmp_path / "b", 50_000))).result
    assert cool.ok and cool.hygiene.zone_trip_end is not None and cool.hygiene.zone_trip_end.temp_c < 99.0
    assert "thermal zone" not in (cool.hygiene.warning or "")


def test_a_board_over_ssh_is_read_on_the_device(board, tmp_path):  # noqa: F811
    tree = _orin(tmp_path, 99_000)
    run = run_trial(_command(), target=board(sysfs_root=str(tree))).result
    assert run.ok, run.reason
    assert run.hygiene.zone_trip_end == ZoneTrip(zone="cpu-thermal", temp_c=99.0, passive_trip_c=99.0)
    assert "at or above its first passive trip point (99.0 °C)" in (run.hygiene.warning or "")
