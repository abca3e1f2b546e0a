"""The NVML sensor: its absence handled for real on this machine, its decoding and energy with a stand-in module.

No GPU machine is lent to this project's tests, so ``FakeNvml`` below is a test double of ``pynvml``: the
functions the sensor calls, with the return shapes of nvidia-ml-py.  It is injected only here.
"""

import io
import sys
from types import SimpleNamespace

import pytest

from edgebench.host.sysfs import SysFS
from edgebench.measure.power import device_energy, power_channels
from edgebench.sensors.nvml import NvmlSensor
from edgebench.sensors.sampler import Sampler, SamplerConfig
from edgebench.sensors.samples import parse_samples

LIVE = SysFS("/")


class NotSupported(Exception):
    """Stands for pynvml.NVMLError_NotSupported."""


class FakeNvml:
    """Two GPUs: a Volta-class one with an energy counter that grows 50 J per poll, and an older one without."""

    NVML_TEMPERATURE_GPU = 0

    def __init__(self) -> None:
        self.energy_mj = 1_000_000
        self.initialized = 0

    def nvmlInit(self):
        self.initialized += 1

    def nvmlShutdown(self):
        self.initialized -= 1

    def nvmlDeviceGetCount(self):
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):
        return f"handle{i}"

    def nvmlDeviceGetName(self, h):
        return b"Tesla V100-SXM2-16GB" if h == "handle0" else "Tesla P4"

    def nvmlDeviceGetUtilizationRates(self, h):
        return SimpleNamespace(gpu=87 if h == "handle0" else 12, memory=40)

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(used=3 * 2**30, total=16 * 2**30, free=13 * 2**30)

    def nvmlDeviceGetPowerUsage(self, h):
        return 212_000 if h == "handle0" else 31_500

    def nvmlDeviceGetTotalEnergyConsumption(self, h):
        if h != "handle0":
            raise NotSupported("Not Supported")
        self.energy_mj += 50_000
        return self.energy_mj

    def nvmlDeviceGetTemperature(self, h, sensor):
        return 64


def test_absent_nvml_is_reported_with_the_reason():
    """Real: on this machine pynvml is either not installed or finds no driver; either way, a reason, no crash."""
    status = NvmlSensor(LIVE).available()
    if status:
        pytest.skip("this machine has an NVIDIA GPU and driver")
    assert "pip install 'edgebench[nvidia]'" in status.reason or "no NVIDIA driver" in status.reason


def test_library_not_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # what import sees when the package is absent
    status = NvmlSensor(LIVE).available()
    assert not status and "pynvml is not installed" in status.reason


def test_copied_tree_has_no_nvml(sysfs_tree):
    status = NvmlSensor(SysFS(sysfs_tree("jetson_orin")), nvml=FakeNvml()).available()
    assert not status and "--sysfs-root" in status.reason


def test_driver_that_fails_to_start():
    class NoDriver(FakeNvml):
        def nvmlInit(self):
            raise RuntimeError("Driver Not Loaded")

    status = NvmlSensor(LIVE, nvml=NoDriver()).available()
    assert not status and "Driver Not Loaded" in status.reason


def test_columns_readings_and_channels_with_a_stand_in():
    fake = FakeNvml()
    sensor = NvmlSensor(LIVE, nvml=fake)
    assert sensor.available() and fake.initialized == 0  # the check leaves NVML as it found it
    columns = sensor.open()
    assert columns == (
        "gpu0_util_pct", "gpu0_mem_used_bytes", "gpu0_power_mw", "gpu0_energy_mj", "temp_nvml_gpu0_mc",
        "gpu1_util_pct", "gpu1_mem_used_bytes", "gpu1_power_mw", "temp_nvml_gpu1_mc",
    )  # fmt: skip
    values = dict(zip(columns, sensor.read(), strict=True))
    assert values["gpu0_util_pct"] == 87 and values["gpu1_util_pct"] == 12
    assert values["gpu0_mem_used_bytes"] == 3 * 2**30
    assert values["temp_nvml_gpu0_mc"] == 64_000
    assert values["gpu0_energy_mj"] > 1_000_000
    channels = {c.name: c for c in sensor.power_channels()}
    assert channels["gpu0"].energy_column == "gpu0_energy_mj" and channels["gpu0"].energy_unit_j == 1e-3
    assert channels["gpu1"].energy_column is None and channels["gpu1"].power_column == "gpu1_power_mw"
    assert sensor.labels()["gpu0_util_pct"] == "Tesla V100-SXM2-16GB (GPU 0)"


def test_a_failing_query_mid_run_is_an_empty_cell():
    class Flaky(FakeNvml):
        fail = False

        def nvmlDeviceGetPowerUsage(self, h):
            if self.fail:
                raise RuntimeError("GPU is lost")
            return super().nvmlDeviceGetPowerUsage(h)

    fake = Flaky()
    sensor = NvmlSensor(LIVE, nvml=fake)
    columns = sensor.open()
    fake.fail = True
    values = dict(zip(columns, sensor.read(), strict=True))
    assert values["gpu0_power_mw"] is None and values["gpu0_util_pct"] == 87


def test_sampler_polls_nvml_through_callables_and_energy_prefers_the_counter(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml())
    sampler = Sampler(SamplerConfig(out_csv=str(tmp_path / "s.csv"), sensors=("nvml",)))
    assert sampler.meta.sensors == ["nvml"]
    raw = b"".join(sampler.poll(every_source=True) for _ in range(4))
    csv = io.StringIO()
    sampler.decode(io.BytesIO(raw), csv)
    samples = parse_samples(csv.getvalue(), sampler.meta)
    assert [c.name for c in power_channels(samples)] == ["gpu0", "gpu1"]
    t0, t1 = int(samples.t_ns[0]), int(samples.t_ns[-1])
    figures = device_energy(samples, t0, t1)
    # Both GPUs are parts: gpu0 from its counter (3 x 50 J), gpu1 from its power readings (31.5 W).
    assert figures.source == "nvml: gpu0 + gpu1 (energy counter, power samples)"
    assert figures.rails["gpu0"].gross_j == pytest.approx(150.0)
    assert figures.rails["gpu1"].avg_power_w == pytest.approx(31.5)
    assert figures.gross_j == pytest.approx(150.0 + 31.5 * (t1 - t0) / 1e9)
