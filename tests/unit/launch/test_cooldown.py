"""Cool-down: fixed pauses, waiting for idle temperature on a fixture tree, timeouts, and the no-sensor fallback."""

import shutil

import pytest

from edgebench.config.sweep_file import CooldownConfig
from edgebench.host.sysfs import SysFS
from edgebench.launch.cooldown import FALLBACK_S, Cooler


class FakeTime:
    """A clock and a sleep that advance together; ``on_sleep`` lets a test change the device while it waits."""

    def __init__(self, on_sleep=None) -> None:
        self.now = 0.0
        self.on_sleep = on_sleep

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.on_sleep:
            self.on_sleep(self.now)


@pytest.fixture
def phone(tmp_path, sysfs_tree):
    root = tmp_path / "sm8150"
    shutil.copytree(sysfs_tree("sm8150_meizu16t"), root)
    return root


def zone(root, n):
    return root / f"sys/class/thermal/thermal_zone{n}/temp"


def cooler(config, root, time):
    return Cooler(config, SysFS(root), clock=time.clock, sleep=time.sleep)


def test_fixed_pause(tmp_path):
    t = FakeTime()
    ticks = []
    outcome = cooler(CooldownConfig(seconds=5), tmp_path, t).wait(ticks.append)
    assert (outcome.waited_s, outcome.rule) == (5.0, "fixed 5 s")
    assert len(ticks) == 5 and "cooling down" in ticks[0]


def test_waits_until_every_sensor_is_near_idle(phone):
    t = FakeTime()
    c = cooler(CooldownConfig(until_idle=True, within_c=2.0), phone, t)
    idle = c.measure_idle()
    assert idle["cpu-1-0-usr (thermal_zone2)"] == pytest.approx(39.9)
    zone(phone, 2).write_text("60000\n")  # a trial heated the gold cluster by 20 °C

    start = t.now

    def cool(now):  # loses 2 °C a second
        zone(phone, 2).write_text(f"{int(60000 - 2000 * (now - start))}\n")

    t.on_sleep = cool
    ticks = []
    outcome = c.wait(ticks.append)
    # 60 - 2t <= 39.9 + 2 once t >= 9.05 s; polled once a second
    assert outcome.waited_s == pytest.approx(10.0) and t.now - start == pytest.approx(10.0)
    assert outcome.rule.startswith("idle temperature (within 2 °C) after 10 s")
    assert "cpu-1-0-usr" in ticks[0]


def test_gives_up_at_the_timeout(phone):
    t = FakeTime()
    c = cooler(CooldownConfig(until_idle=True, timeout=30), phone, t)
    c.measure_idle()
    zone(phone, 0).write_text("80000\n")  # never cools
    outcome = c.wait()
    assert outcome.waited_s == pytest.approx(30.0)
    assert outcome.rule.startswith("timeout after 30 s (aoss0-usr (thermal_zone0) 80.0 °C, idle 36.1 °C)")


def test_falls_back_to_a_fixed_pause_without_temperature_sensors(tmp_path):
    t = FakeTime()
    c = cooler(CooldownConfig(until_idle=True), tmp_path, t)
    assert c.measure_idle() == {}
    assert "no temperature sensor" in c.describe() and f"{FALLBACK_S:g} s" in c.describe()
    outcome = c.wait()
    assert outcome.waited_s == FALLBACK_S and outcome.rule == f"fixed {FALLBACK_S:g} s (no temperature sensor)"
    outcome = cooler(CooldownConfig(until_idle=True, seconds=7), tmp_path, FakeTime()).wait()
    assert outcome.waited_s == 7


def test_disabled():
    c = Cooler(CooldownConfig(), SysFS("/nonexistent"))
    assert not c.enabled and c.wait().waited_s == 0
