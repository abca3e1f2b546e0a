"""Sensors on the real /proc of this machine and on a fixture tree copied from a Raspberry Pi 4."""

import os
import subprocess
import sys
from pathlib import Path

from edgebench.host.cpu import cpu_model, freq_policies, online_cores
from edgebench.host.environment import host_environment
from edgebench.host.sysfs import SysFS
from edgebench.sensors.cpufreq import CpuFreqSensor
from edgebench.sensors.meminfo import MemorySensor
from edgebench.sensors.process import ProcessSensor
from edgebench.sensors.procstat import CpuTimeSensor, parse_core_ticks
from edgebench.sensors.thermal import ThermalSensor

LIVE = SysFS("/")


def busy_ms(ms: float) -> None:
    import time

    end = time.perf_counter() + ms / 1e3
    while time.perf_counter() < end:
        pass


def test_cpu_time_on_live_proc_counts_every_online_core():
    sensor = CpuTimeSensor(LIVE)
    assert sensor.available()
    columns = sensor.open()
    assert len(columns) == 2 * len(online_cores(LIVE)) == 2 * os.cpu_count()
    first = sensor.read()
    busy_ms(50)
    second = sensor.read()
    assert all(b >= a for a, b in zip(first, second, strict=True))
    assert sum(second) > sum(first)


def test_process_sensor_on_live_proc_sees_own_cpu_time_and_rss():
    sensor = ProcessSensor(LIVE, pid=os.getpid())
    assert sensor.available()
    assert sensor.open() == ("proc_utime_ticks", "proc_stime_ticks", "proc_rss_bytes", "proc_children_ticks")
    utime0, _, rss, children0 = sensor.read()
    busy_ms(100)
    subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)  # a child it waits for
    utime1, _, _, children1 = sensor.read()
    assert utime1 > utime0 and children1 > children0  # the child's CPU time, once reaped
    assert rss > 10 * 2**20  # a Python process with numpy loaded


def test_process_sensor_reports_an_absent_pid():
    sensor = ProcessSensor(LIVE, pid=2**22 + 1)
    status = sensor.available()
    assert not status and "not running" in status.reason
    assert not ProcessSensor(LIVE).available()


def test_memory_sensor_on_live_proc():
    sensor = MemorySensor(LIVE)
    sensor.open()
    available, free = sensor.read()
    assert 0 < free <= available


def test_freq_and_thermal_availability_match_this_machine():
    has_cpufreq = any(Path("/sys/devices/system/cpu").glob("cpu*/cpufreq/scaling_cur_freq"))
    has_thermal = any(Path("/sys/class/thermal").glob("thermal_zone*/temp")) or any(
        Path("/sys/class/hwmon").glob("hwmon*/temp*_input")
    )
    freq, thermal = CpuFreqSensor(LIVE).available(), ThermalSensor(LIVE).available()
    assert bool(freq) == has_cpufreq
    assert bool(thermal) == has_thermal
    if not freq:
        assert "cpufreq" in freq.reason
    if not thermal:
        assert "thermal_zone" in thermal.reason


def test_rpi4_tree(sysfs_tree):
    pi = SysFS(sysfs_tree("rpi4"))
    assert online_cores(pi) == (0, 1, 2, 3)
    assert cpu_model(pi) == "Raspberry Pi 4 Model B Rev 1.4"
    (policy,) = freq_policies(pi)
    assert policy.cores == (0, 1, 2, 3)
    assert policy.governor == "ondemand"
    assert policy.available_khz[0] == 600_000 and policy.available_khz[-1] == 1_500_000

    freq = CpuFreqSensor(pi)
    assert freq.available()
    assert freq.open() == tuple(f"cpu{c}_freq_khz" for c in range(4))
    assert freq.read() == [1_500_000] * 4

    thermal = ThermalSensor(pi)
    assert thermal.open() == ("temp_cpu_thermal_mc",)  # the zone's hwmon twin is not counted twice
    assert thermal.read() == [48_686]
    assert thermal.labels() == {"temp_cpu_thermal_mc": "cpu-thermal (thermal_zone0)"}

    cpu = CpuTimeSensor(pi)
    assert len(cpu.open()) == 8
    assert cpu.read()[:2] == [53719 + 260 + 17426 + 1416, 3646089 + 2150]

    proc = ProcessSensor(pi, pid=4242, page_size_bytes=4096)
    proc.open()
    assert proc.read() == [1523, 311, 86213 * 4096, 0]  # no child waited for

    env = host_environment(pi)
    assert env["governors"] == {"policy0": "ondemand"}
    assert env["mem_total_bytes"] == 3884172 * 1024


def test_proc_stat_cut_mid_line_drops_the_partial_line():
    text = b"cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 0 1 10 0 0 0 0 0 0\ncpu1 2 0 2 2"
    assert parse_core_ticks(text) == {0: (2, 10)}


def test_tegra_pmic_die_constant_is_not_a_temperature(sysfs_tree):
    """The TX2's PMIC-Die zone always reads 100 °C; it would make every TX2 look hot."""
    columns = ThermalSensor(SysFS(sysfs_tree("jetson_tx2"))).open()
    assert "temp_pmic_die_mc" not in columns
    assert {"temp_bcpu_therm_mc", "temp_mcpu_therm_mc", "temp_gpu_therm_mc"} <= set(columns) and len(columns) == 7


def test_unreadable_thermal_zone_reads_none(tmp_path):
    zone = tmp_path / "sys/class/thermal/thermal_zone0"
    zone.mkdir(parents=True)
    (zone / "type").write_text("battery\n")
    (zone / "temp").write_text("")  # some phones return an empty read or EAGAIN while the gauge updates
    sensor = ThermalSensor(SysFS(tmp_path))
    sensor.open()
    assert sensor.read() == [None]
