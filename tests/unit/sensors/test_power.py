"""Power, energy and GPU sensors on fixture trees written from the documented layouts of real boards.

Variants (another vendor's sign or units, a charger plugged in, a wrapped counter, a root-only file) are made by
copying a tree into ``tmp_path`` and changing the files a real device of that kind would show differently.
"""

import dataclasses
import io
import json
import math
import os
import shutil
import stat
import tempfile
from pathlib import Path

import numpy as np
import pytest

from edgebench.host.sysfs import SysFS
from edgebench.measure.power import device_energy, power_channels
from edgebench.records.trial import Trial
from edgebench.sensors.base import CounterUnwrap
from edgebench.sensors.jetson_gpu import JetsonGpuSensor
from edgebench.sensors.jetson_power import JetsonPowerSensor
from edgebench.sensors.odpm import OdpmSensor
from edgebench.sensors.power_supply import PowerSupplySensor
from edgebench.sensors.process_memory import ProcessMemorySensor
from edgebench.sensors.rapl import RaplSensor
from edgebench.sensors.sampler import Sampler, SamplerConfig
from edgebench.sensors.samples import parse_samples

POWER_SENSORS = (RaplSensor, JetsonPowerSensor, JetsonGpuSensor, PowerSupplySensor, OdpmSensor)


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, dirs_exist_ok=True)
    return dst


def opened(sensor):
    assert sensor.available(), sensor.available().reason
    return dict(zip(sensor.open(), sensor.read(), strict=True))


# --------------------------------------------------------------------------- RAPL


def test_rapl_on_an_intel_laptop(sysfs_tree):
    rapl = RaplSensor(SysFS(sysfs_tree("intel_laptop")))
    values = opened(rapl)
    assert values == {
        "rapl_package_0_energy_uj": 48234111322,
        "rapl_package_0_core_energy_uj": 21045633120,
        "rapl_package_0_uncore_energy_uj": 1183376552,
        "rapl_package_0_dram_energy_uj": 9043344066,
        "rapl_psys_energy_uj": 101234556612,
    }
    scopes = {c.name: c.scope for c in rapl.power_channels()}
    assert scopes == {
        "package-0": "part",
        "package-0/core": "sub",
        "package-0/uncore": "sub",
        "package-0/dram": "part",  # DRAM is outside the package domain although listed below it
        "psys": "total",
    }
    assert rapl.labels()["rapl_package_0_dram_energy_uj"] == "RAPL package-0/dram"


def test_counter_unwrap_adds_the_range_at_each_wrap():
    unwrap = CounterUnwrap(1000)
    assert [unwrap(v) for v in (900, 990, 10, None, 500, 20)] == [900, 990, 1010, None, 1500, 2020]
    assert unwrap.wraps == 2
    assert [CounterUnwrap(None)(v) for v in (5, 3)] == [5, 3]  # no range known: left as read


def test_rapl_wraparound_through_the_sampler_and_energy(sysfs_tree, tmp_path):
    tree = copy_tree(sysfs_tree("intel_laptop"), tmp_path / "laptop")
    package = tree / "sys/class/powercap/intel-rapl:0/energy_uj"
    max_range = 262143328850
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), sysfs_root=str(tree), sensors=("rapl",))
    sampler = Sampler(config)
    raw = b""
    for value in (max_range - 300_000, max_range - 100_000, 200_000, 700_000):
        package.write_text(f"{value}\n")
        raw += sampler.poll()
    csv = io.StringIO()
    sampler.decode(io.BytesIO(raw), csv)
    samples = parse_samples(csv.getvalue(), sampler.meta)
    energy = samples.columns["rapl_package_0_energy_uj"]
    assert np.diff(energy).tolist() == [200_000, 300_000, 500_000]  # the wrap costs nothing
    channel = next(c for c in power_channels(samples) if c.name == "package-0")
    from edgebench.measure.power import window_energy_j

    assert window_energy_j(samples, channel, int(samples.t_ns[0]), int(samples.t_ns[-1])) == pytest.approx(1.0)


def _as_nobody(fn):
    """Call ``fn`` without root's right to read anything: in a forked child that drops to ``nobody`` when root."""
    if os.geteuid() != 0:
        return fn()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_end)
            os.setgid(65534)
            os.setuid(65534)
            os.write(write_end, json.dumps(fn()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def test_rapl_readable_by_root_only_says_how_to_grant_access(sysfs_tree):
    # The tree must be reachable by an unprivileged user: pytest's tmp_path is private to root.
    base = Path(tempfile.mkdtemp(prefix="edgebench-rapl-", dir="/tmp"))
    try:
        tree = copy_tree(sysfs_tree("intel_laptop"), base / "laptop")
        for folder in [base, *(p for p in tree.rglob("*") if p.is_dir()), tree]:
            folder.chmod(0o755)
        for counter in tree.glob("sys/class/powercap/intel-rapl:*/energy_uj"):
            counter.chmod(stat.S_IRUSR)  # 0400 root, as since Linux 5.10

        def check():
            status = RaplSensor(SysFS(tree)).available()
            return [bool(status), status.reason]

        ok, reason = _as_nobody(check)
        assert not ok
        assert "readable by root only" in reason and "chmod a+r" in reason and "energy_uj" in reason
    finally:
        shutil.rmtree(base)


def test_rapl_missing_counter_file_reads_as_empty(sysfs_tree, tmp_path):
    tree = copy_tree(sysfs_tree("intel_laptop"), tmp_path / "laptop")
    rapl = RaplSensor(SysFS(tree))
    rapl.open()
    (tree / "sys/class/powercap/intel-rapl:0:0/energy_uj").unlink()  # a zone that vanished after discovery
    assert rapl.read()[1] is None


# --------------------------------------------------------------------------- Jetson


def test_jetson_tx2_iio_rails(sysfs_tree):
    sensor = JetsonPowerSensor(SysFS(sysfs_tree("jetson_tx2")))
    values = opened(sensor)
    assert values["rail_vdd_in_power_mw"] == 2981
    assert values["rail_vdd_sys_cpu_power_mw"] == 306
    assert values["rail_vdd_sys_gpu_power_mw"] == 152
    assert values["rail_vdd_sys_ddr_power_mw"] == 611
    assert values["rail_vdd_sys_soc_power_mw"] == 687
    scopes = {c.name: c.scope for c in sensor.power_channels()}
    assert scopes["VDD_IN"] == "total"  # the module's input; the carrier's VDD_MUX is never added to it
    assert scopes["VDD_MUX"] == "sub"
    assert {scopes[r] for r in ("VDD_SYS_CPU", "VDD_SYS_GPU", "VDD_SYS_DDR", "VDD_SYS_SOC")} == {"sub"}


def test_jetson_orin_hwmon_rails_multiply_volts_and_amps_and_skip_nc(sysfs_tree):
    sensor = JetsonPowerSensor(SysFS(sysfs_tree("jetson_orin")))
    values = opened(sensor)
    assert values["rail_vdd_gpu_soc_power_mw"] == round(19960 * 215 / 1000)
    assert values["rail_vdd_gpu_soc_voltage_mv"] == 19960 and values["rail_vdd_gpu_soc_current_ma"] == 215
    assert values["rail_vddq_vdd2_1v8ao_power_mw"] == round(4992 * 132 / 1000)
    assert not any("nc" in c.split("_") for c in values)  # the unconnected channels
    assert not any("shunt" in c for c in values)  # in7 is the sum of shunt voltages, not a rail
    # No input rail on an AGX Orin: its rails are the parts that add up to the module.
    assert {c.scope for c in sensor.power_channels()} == {"part"}
    assert len(sensor.power_channels()) == 4


def test_jetson_rail_that_fails_to_read_is_empty(sysfs_tree, tmp_path):
    tree = copy_tree(sysfs_tree("jetson_orin"), tmp_path / "orin")
    sensor = JetsonPowerSensor(SysFS(tree))
    sensor.open()
    (tree / "sys/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3/curr1_input").write_text("")
    assert sensor.read()[:3] == [None, 19960, None]


def test_jetson_gpu_load_and_clock(sysfs_tree):
    assert opened(JetsonGpuSensor(SysFS(sysfs_tree("jetson_tx2")))) == {
        "gpu0_load_permille": 312,
        "gpu0_freq_khz": 1300500,
    }
    assert opened(JetsonGpuSensor(SysFS(sysfs_tree("jetson_orin")))) == {
        "gpu0_load_permille": 0,
        "gpu0_freq_khz": 306000,
    }


# --------------------------------------------------------------------------- battery and USB


def phone(sysfs_tree, tmp_path, **files: str) -> SysFS:
    tree = copy_tree(sysfs_tree("android_phone"), tmp_path / "phone")
    for rel, text in files.items():
        (tree / "sys/class/power_supply" / rel).write_text(text + "\n")
    return SysFS(tree)


def test_android_phone_discharging_with_negative_current(sysfs_tree):
    values = opened(PowerSupplySensor(SysFS(sysfs_tree("android_phone"))))
    assert values == {
        "battery_charging": 0,
        "external_power_online": 0,
        "battery_voltage_uv": 3876000,
        "battery_current_ua": 512345,  # positive: leaving the battery, whatever the vendor's sign
        "battery_power_mw": round(512345 * 3876000 / 1e9),
        "usb_voltage_uv": 0,
        "usb_current_ua": 0,
        "usb_power_mw": 0,
        "device_power_mw": round(512345 * 3876000 / 1e9),
        "temp_power_supply_battery_mc": 24700,  # 247 tenths of a degree, as dumpsys battery prints
    }


@pytest.mark.parametrize(
    ("current", "voltage"),
    [
        ("512345", "3876000"),  # vendors that report discharge as positive
        ("-512345", "3876000"),  # the kernel ABI's sign
        ("-512", "3876000"),  # mA instead of uA
        ("512", "3876"),  # mA and mV
    ],
)
def test_units_and_sign_are_normalized_across_vendors(sysfs_tree, tmp_path, current, voltage):
    fs = phone(sysfs_tree, tmp_path, **{"battery/current_now": current, "battery/voltage_now": voltage})
    values = opened(PowerSupplySensor(fs))
    assert values["battery_current_ua"] == pytest.approx(512345, rel=1e-3)
    assert values["battery_voltage_uv"] == 3876000
    assert values["device_power_mw"] == pytest.approx(1986, abs=2)


def test_usb_charging_is_detected_and_device_power_is_usb_in_minus_charge(sysfs_tree, tmp_path):
    fs = phone(
        sysfs_tree,
        tmp_path,
        **{
            "battery/status": "Charging",
            "battery/current_now": "800000",
            "usb/online": "1",
            "usb/input_current_now": "1200000",
            "usb/voltage_now": "5000000",
        },
    )
    values = opened(PowerSupplySensor(fs))
    assert values["battery_charging"] == 1 and values["external_power_online"] == 1
    assert values["battery_current_ua"] == -800000
    assert values["battery_power_mw"] == -round(800000 * 3876000 / 1e9)
    assert values["usb_power_mw"] == 6000
    assert values["device_power_mw"] == 6000 - round(800000 * 3876000 / 1e9)


def test_full_battery_on_usb_counts_as_entering(sysfs_tree, tmp_path):
    fs = phone(sysfs_tree, tmp_path, **{"battery/status": "Full", "battery/current_now": "20000", "usb/online": "1"})
    assert opened(PowerSupplySensor(fs))["battery_current_ua"] == -20000


def test_charger_without_readable_input_leaves_device_power_empty(sysfs_tree, tmp_path):
    fs = phone(sysfs_tree, tmp_path, **{"battery/status": "Charging", "dc/online": "1"})
    values = opened(PowerSupplySensor(fs))
    assert values["external_power_online"] == 1
    assert values["device_power_mw"] is None  # the battery alone cannot say what the device used


def test_laptop_battery_power_now(sysfs_tree):
    values = opened(PowerSupplySensor(SysFS(sysfs_tree("intel_laptop"))))
    assert values["battery_power_mw"] == values["device_power_mw"] == 7850
    assert values["battery_current_ua"] is None and values["battery_voltage_uv"] == 12480000


# --------------------------------------------------------------------------- absent sensors, process memory


@pytest.mark.parametrize(
    ("tree", "present"),
    [
        ("container", set()),
        ("rpi4", set()),
        ("jetson_tx2", {JetsonPowerSensor, JetsonGpuSensor}),
        ("jetson_orin", {JetsonPowerSensor, JetsonGpuSensor}),
        ("android_phone", {PowerSupplySensor}),
        ("intel_laptop", {RaplSensor, PowerSupplySensor}),
        ("pixel6", {OdpmSensor, PowerSupplySensor}),
    ],
)
def test_each_tree_has_exactly_its_power_sensors_and_says_why_not(sysfs_tree, tree, present):
    fs = SysFS(sysfs_tree(tree))
    for cls in POWER_SENSORS:
        status = cls(fs).available()
        assert bool(status) == (cls in present), (tree, cls.name, status.reason)
        if not status:
            assert status.reason and ("no " in status.reason)


def test_process_memory_as_top_shows_it(sysfs_tree):
    values = opened(ProcessMemorySensor(SysFS(sysfs_tree("rpi4")), pid=4242, page_size_bytes=4096))
    assert values == {
        "proc_virt_bytes": 288315 * 4096,
        "proc_res_bytes": 86213 * 4096,
        "proc_shr_bytes": 9912 * 4096,
    }
    assert not ProcessMemorySensor(SysFS(sysfs_tree("rpi4"))).available()


def test_device_energy_on_tx2_samples_is_the_module_input_never_module_plus_carrier(sysfs_tree, tmp_path):
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), sysfs_root=str(sysfs_tree("jetson_tx2")))
    sampler = Sampler(config)
    raw = b"".join(sampler.poll() for _ in range(5))
    csv = io.StringIO()
    sampler.decode(io.BytesIO(raw), csv)
    samples = parse_samples(csv.getvalue(), sampler.meta)
    t0, t1 = int(samples.t_ns[0]), int(samples.t_ns[-1])
    figures = device_energy(samples, t0, t1)
    assert figures.source == "jetson_power: VDD_IN (power samples)"
    assert figures.avg_power_w == pytest.approx(2.981)  # not + VDD_MUX's 1.250: that may hold VDD_IN already
    assert figures.rails["VDD_MUX"].avg_power_w == pytest.approx(1.250)  # shown, as a rail of its own
    assert figures.rails["VDD_SYS_CPU"].avg_power_w == pytest.approx(0.306)


# --------------------------------------------------------------------------- Pixel ODPM

PIXEL_IIO = "sys/bus/iio/devices"


def test_odpm_rails_of_a_pixel_are_energy_counters_named_by_schematic(sysfs_tree):
    sensor = OdpmSensor(SysFS(sysfs_tree("pixel6")))
    values = opened(sensor)
    assert len(values) == 16  # eight channels on each of the two PMICs
    assert values["odpm_s2m_vdd_cpucl2_energy_uj"] == 96813472  # CH3(T=1482331)[S2M_VDD_CPUCL2], 96813472
    assert values["odpm_vsys_pwr_display_energy_uj"] == 411208871
    assert sensor.labels()["odpm_s2m_vdd_cpucl2_energy_uj"] == "ODPM CPU(BIG) (S2M_VDD_CPUCL2)"
    assert {c.scope for c in sensor.power_channels()} == {"part"}


def _energy_file(rails: list[tuple[str, int]], t_ms: int) -> str:
    """``energy_value`` as odpm.c prints it: ``t=%ld`` then ``CH%d(T=%ld)[%s], %ld`` (energy in uW*s)."""
    return f"t={t_ms}\n" + "".join(f"CH{i}(T={t_ms})[{name}], {uws}\n" for i, (name, uws) in enumerate(rails))


def _pixel_samples(tree: Path, tmp_path: Path, steps_uj: list[int]):
    """Samples of a Pixel tree whose every ODPM rail grows by ``steps_uj[k]`` before poll k+1."""
    names = {}
    for device in ("iio:device0", "iio:device1"):
        text = (tree / PIXEL_IIO / device / "enabled_rails").read_text()
        names[device] = [line.split("[")[1].split("]")[0] for line in text.splitlines()]
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), sysfs_root=str(tree), sensors=("odpm", "power_supply"))
    sampler = Sampler(config)
    raw = b""
    total = 0
    for k, step in enumerate([0, *steps_uj]):
        total += step
        for device, rails in names.items():
            (tree / PIXEL_IIO / device / "energy_value").write_text(
                _energy_file([(n, 1_000_000 + total) for n in rails], 1000 + k)
            )
        raw += sampler.poll()
    csv = io.StringIO()
    sampler.decode(io.BytesIO(raw), csv)
    return parse_samples(csv.getvalue(), sampler.meta)


def test_odpm_energy_per_rail_and_device_total_with_idle_subtraction(sysfs_tree, tmp_path):
    tree = copy_tree(sysfs_tree("pixel6"), tmp_path / "pixel")
    shutil.rmtree(tree / "sys/class/power_supply")  # no fuel gauge: the rails add up to the device's figure
    samples = _pixel_samples(tree, tmp_path, [1000, 1000, 5000, 5000, 5000])
    t = [int(x) for x in samples.t_ns]
    idle, (t0, t1) = (t[0], t[2]), (t[2], t[5])
    figures = device_energy(samples, t0, t1, idle=idle)
    assert figures.source.startswith("odpm: ") and "(energy counter)" in figures.source
    assert len(figures.channels) == 16
    assert figures.gross_j == pytest.approx(16 * 15_000e-6)
    rail = figures.rails["S2M_VDD_CPUCL2"]
    idle_w = 2000e-6 / ((idle[1] - idle[0]) / 1e9)
    assert rail.idle_power_w == pytest.approx(idle_w)
    assert rail.gross_j == pytest.approx(15_000e-6)
    window_s = (t1 - t0) / 1e9
    assert figures.active_j == pytest.approx(16 * max(15_000e-6 - idle_w * window_s, 0.0), abs=1e-9)


def test_odpm_beside_the_fuel_gauge_is_per_rail_and_the_gauge_is_the_total(sysfs_tree, tmp_path):
    tree = copy_tree(sysfs_tree("pixel6"), tmp_path / "pixel")
    samples = _pixel_samples(tree, tmp_path, [5000, 5000])
    figures = device_energy(samples, int(samples.t_ns[0]), int(samples.t_ns[-1]))
    assert figures.source == "power_supply: device (power samples)"
    assert figures.rails["VSYS_PWR_DISPLAY"].gross_j == pytest.approx(10_000e-6)
    assert samples.columns["battery_charge_counter_uah"].tolist() == [2710000] * 3  # the coulomb counter


def test_odpm_channel_switched_to_another_rail_reads_empty(sysfs_tree, tmp_path):
    tree = copy_tree(sysfs_tree("pixel6"), tmp_path / "pixel")
    sensor = OdpmSensor(SysFS(tree))
    sensor.open()
    energy = tree / PIXEL_IIO / "iio:device0/energy_value"
    energy.write_text(energy.read_text().replace("CH3(T=1482331)[S2M_VDD_CPUCL2], 96813472", "CH3(T=20)[L2M_ALIVE], 5"))
    values = dict(zip([r.column for r in sensor.rails], sensor.read(), strict=True))
    assert values["odpm_s2m_vdd_cpucl2_energy_uj"] is None  # restarted from 0 under another rail: not a drop
    assert values["odpm_l2m_alive_energy_uj"] == 21942177


# --------------------------------------------------------------------------- energy with error bars


def _every_third(tree: Path, tmp_path: Path, grow_uj: list[int]):
    """Pixel samples whose rail counters change only every third poll (a source refreshing slower than the
    sampler), restamped 100 ms apart so that the periods are exact."""
    steps = [s for g in grow_uj for s in (0, 0, g)]
    samples = _pixel_samples(tree, tmp_path, steps)
    return dataclasses.replace(samples, t_ns=np.arange(len(samples), dtype=np.int64) * 100_000_000)


def test_energy_interval_from_refresh_resolution_and_idle_spread(sysfs_tree, tmp_path):
    from edgebench.measure.energy_error import energy_interval

    tree = copy_tree(sysfs_tree("pixel6"), tmp_path / "pixel")
    shutil.rmtree(tree / "sys/class/power_supply")
    samples = _every_third(tree, tmp_path, [1000, 3000, 2000, 6000, 6000, 6000, 6000])
    t = samples.t_ns
    idle, (t0, t1) = (int(t[0]), int(t[9])), (int(t[9]), int(t[21]))
    figures = device_energy(samples, t0, t1, idle=idle)
    interval = energy_interval(samples, figures, t0, t1, idle)
    assert interval.refused is None
    assert interval.refresh_s == pytest.approx(0.3)  # a change every third 100 ms poll
    assert interval.parts_j["resolution"] == pytest.approx(math.sqrt(16 * 2) * 1e-6)  # 1 uJ at both edges, 16 rails
    power_w = 24_000e-6 / 1.2  # each rail: 4 x 6000 uJ over the 1.2 s window
    assert interval.parts_j["refresh"] == pytest.approx(math.sqrt(16 * 2) * power_w * 0.3 / 2)
    idle_w = np.array([1000, 3000, 2000]) * 1e-6 / 0.3  # the idle readings that changed
    spread = 4.302652729911275 * idle_w.std(ddof=1) / math.sqrt(3)  # Student t(0.975, 2)
    assert interval.parts_j["idle_baseline"] == pytest.approx(4 * spread * 1.2)  # 16 rails in quadrature: 4x
    assert interval.ci95_j == pytest.approx(math.sqrt(sum(v**2 for v in interval.parts_j.values())))


def test_a_window_shorter_than_two_refreshes_is_not_claimed(sysfs_tree, tmp_path):
    from edgebench.measure.energy import measured_energy
    from edgebench.records.events import Idle

    tree = copy_tree(sysfs_tree("pixel6"), tmp_path / "pixel")
    shutil.rmtree(tree / "sys/class/power_supply")
    samples = _every_third(tree, tmp_path, [1000, 1000, 5000, 5000])
    t = samples.t_ns
    trial = Trial(model="lenet", steps=2, batch_size=4)
    events = [Idle(start_ns=int(t[0]), end_ns=int(t[6]), seconds=0.6)]
    short = measured_energy(trial, events, samples, int(t[6]), int(t[10]), steps=2)  # 0.4 s < 2 x 0.3 s
    assert short.energy_j is None and short.per_step_j is None
    assert short.notes and short.notes[0].startswith("energy_j not claimed: the 0.4 s window is shorter than two")
    assert short.gross_j is not None  # what the counters grew by is still shown, labelled by the note
    whole = measured_energy(trial, events, samples, int(t[6]), int(t[12]), steps=2)  # 0.6 s: two refreshes
    assert whole.energy_j is not None and whole.energy_ci95_j is not None and whole.energy_ci95_j > 0
    assert whole.source_refresh_s == pytest.approx(0.3)


def test_summary_shows_the_interval_and_says_when_a_figure_is_not_claimed():
    from edgebench.records.result import MeasuredEnergy
    from edgebench.report.summary import energy_text
    from tests.factories import result

    base = result("t1", [10.0, 11.0])
    shown = base.model_copy(update={"energy": MeasuredEnergy(
        energy_j=1.5, energy_ci95_j=0.25, per_step_j=0.75, per_sample_j=0.1, avg_power_w=2.0, gross_j=2.0,
        source="odpm: S2M_VDD_CPUCL2 (energy counter)")})  # fmt: skip
    assert energy_text(shown).startswith("1.500 ± 0.250 J (95%) (0.7500 J/step")
    refused = base.model_copy(update={"energy": MeasuredEnergy(gross_j=0.01, notes=["energy_j not claimed: ..."])})
    assert energy_text(refused) == "- (measured, but the window cannot resolve it: see the energy note)"
