"""The integrated GPU of a Jetson board: its load (per mille) and clock, the input of GPU utilization (eq. 3).

``load`` is the share of the last sampling window the GPU was busy, in tenths of a percent.  It sits on the GPU's
platform device: ``/sys/devices/gpu.0/load`` on TX1/TX2/Nano/Xavier, ``/sys/devices/platform/<addr>.gpu/load`` or
``.../17000000.ga10b/load`` on Orin (JetPack 5/6), and under ``/sys/class/devfreq/<gpu>/device/`` on all of them.
The clock is the GPU's devfreq ``cur_freq`` (Hz, recorded in kHz like the CPU's).
"""

from __future__ import annotations

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import Availability, Reading, Sensor, Source, int_or_none, missing, present

LOAD_PATTERNS = (
    "/sys/devices/gpu.0/load",
    "/sys/devices/platform/gpu.0/load",
    "/sys/devices/platform/*.gpu/load",
    "/sys/devices/platform/*.ga10b/load",
    "/sys/devices/platform/bus@0/*.gpu/load",
    "/sys/class/devfreq/*.gpu/device/load",
    "/sys/class/devfreq/*.ga10b/device/load",
    "/sys/class/devfreq/*.gv11b/device/load",
    "/sys/class/devfreq/*.gp10b/device/load",
)
#: devfreq nodes named after the Tegra GPUs: gm20b (TX1, Nano), gp10b (TX2), gv11b (Xavier), ga10b (Orin).
DEVFREQ_PATTERNS = tuple(f"/sys/class/devfreq/*.{kind}" for kind in ("gpu", "ga10b", "gv11b", "gp10b", "gm20b"))


def _first(sysfs: SysFS, patterns: tuple[str, ...], leaf: str = "") -> str | None:
    for pattern in patterns:
        for hit in sysfs.glob(pattern):
            if sysfs.exists(hit + leaf):
                return hit + leaf
    return None


class JetsonGpuSensor(Sensor):
    """``gpu0_load_permille`` and, where devfreq shows it, ``gpu0_freq_khz``."""

    name = "jetson_gpu"

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self._load: str | None = None
        self._freq: str | None = None

    def available(self) -> Availability:
        load = _first(self.sysfs, LOAD_PATTERNS)
        if load is None:
            return missing("no Tegra GPU load file (/sys/devices/gpu.0/load or a GPU devfreq node): not a Jetson board")
        if self.sysfs.read_str(load) is None:
            return missing(f"{load} cannot be read: run edgebench as root")
        return present()

    def open(self) -> tuple[str, ...]:
        self._load = _first(self.sysfs, LOAD_PATTERNS)
        self._freq = _first(self.sysfs, DEVFREQ_PATTERNS, "/cur_freq")
        return ("gpu0_load_permille",) + (("gpu0_freq_khz",) if self._freq else ())

    def sources(self) -> list[Source]:
        paths = [p for p in (self._load, self._freq) if p]
        return [Source(p, 32) for p in paths]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        out: Reading = [int_or_none(blobs[0])]
        if self._freq:
            hz = int_or_none(blobs[1])
            out.append(None if hz is None else hz // 1000)
        return out

    def labels(self) -> dict[str, str]:
        return {"gpu0_load_permille": "Tegra GPU load"}
