"""NVIDIA GPUs through NVML: utilization, memory, power, the total-energy counter and temperature.

NVML is a library, not a file, so each GPU is one :class:`~edgebench.sensors.base.Source` with a ``poll`` callable
that asks NVML for every quantity and returns them as one line of bytes; the sampler records it like a file read
and :meth:`NvmlSensor.decode` parses it after the run.  ``pynvml`` (the ``nvidia-ml-py`` package, extra
``edgebench[nvidia]``) is imported only when this sensor is asked whether it is available.

The total-energy counter (mJ since the driver loaded; Volta and newer) is preferred for energy: it integrates power
on the GPU itself, whereas ``nvmlDeviceGetPowerUsage`` is a reading (averaged over up to a second on recent GPUs).
A quantity a GPU does not support is left out of the columns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import Availability, PowerChannel, Reading, Sensor, Source, missing, present

#: (column suffix, NVML query) in record order; each query takes (nvml, handle)
QUERIES: tuple[tuple[str, Callable[[Any, Any], int]], ...] = (
    ("util_pct", lambda nv, h: nv.nvmlDeviceGetUtilizationRates(h).gpu),
    ("mem_used_bytes", lambda nv, h: nv.nvmlDeviceGetMemoryInfo(h).used),
    ("power_mw", lambda nv, h: nv.nvmlDeviceGetPowerUsage(h)),
    ("energy_mj", lambda nv, h: nv.nvmlDeviceGetTotalEnergyConsumption(h)),
    ("temp_c", lambda nv, h: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
)


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    handle: Any
    #: indexes into QUERIES that this GPU answers
    supported: tuple[int, ...]


def _column(index: int, suffix: str) -> str:
    return f"temp_nvml_gpu{index}_mc" if suffix == "temp_c" else f"gpu{index}_{suffix}"


class NvmlSensor(Sensor):
    """Per NVIDIA GPU: ``gpuN_util_pct``, ``gpuN_mem_used_bytes``, ``gpuN_power_mw``, ``gpuN_energy_mj``, temperature.

    ``nvml`` replaces the ``pynvml`` module (tests inject a stand-in; nothing else should).
    """

    name = "nvml"
    # NVML averages utilization over 1/6 s to 1 s and refreshes the energy counter about every 100 ms; five queries
    # per GPU at every 10 ms tick would cost more than they tell.
    min_period_ms = 50.0

    def __init__(self, sysfs: SysFS, *, pid: int | None = None, nvml: ModuleType | Any | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self._nvml = nvml
        self.gpus: list[Gpu] = []

    def _lib(self) -> Any:
        if self._nvml is None:
            import pynvml

            self._nvml = pynvml
        return self._nvml

    def available(self) -> Availability:
        if not self.sysfs.is_live:
            return missing("NVML reads this machine's GPUs, not a tree copied from another device (--sysfs-root)")
        try:
            nv = self._lib()
        except ImportError:
            return missing("pynvml is not installed: pip install 'edgebench[nvidia]' (the nvidia-ml-py package)")
        try:
            nv.nvmlInit()
        except Exception as exc:
            return missing(f"NVML did not start ({type(exc).__name__}: {exc}): no NVIDIA driver on this machine")
        try:
            count = nv.nvmlDeviceGetCount()
        finally:
            nv.nvmlShutdown()
        if count == 0:
            return missing("NVML started but sees no NVIDIA GPU")
        return present()

    def open(self) -> tuple[str, ...]:
        nv = self._lib()
        nv.nvmlInit()
        self.gpus = []
        for index in range(nv.nvmlDeviceGetCount()):
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            supported = []
            for q, (_, query) in enumerate(QUERIES):
                try:
                    query(nv, handle)
                except Exception:  # NVMLError_NotSupported (e.g. no energy counter before Volta)
                    continue
                supported.append(q)
            name = nv.nvmlDeviceGetName(handle)
            name = name.decode() if isinstance(name, bytes) else str(name)
            self.gpus.append(Gpu(index, name, handle, tuple(supported)))
        return tuple(_column(g.index, QUERIES[q][0]) for g in self.gpus for q in g.supported)

    def _poller(self, gpu: Gpu) -> Callable[[], bytes]:
        nv = self._lib()
        queries = [QUERIES[q][1] for q in gpu.supported]
        handle = gpu.handle

        def poll() -> bytes:
            cells = []
            for query in queries:
                try:
                    cells.append(str(query(nv, handle)))
                except Exception:
                    cells.append("-")
            return " ".join(cells).encode()

        return poll

    def sources(self) -> list[Source]:
        return [Source(f"nvml:{g.index}", 256, poll=self._poller(g)) for g in self.gpus]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        out: Reading = []
        for gpu, blob in zip(self.gpus, blobs, strict=True):
            cells = (blob or b"").split()
            if len(cells) != len(gpu.supported):
                out.extend([None] * len(gpu.supported))
                continue
            for q, cell in zip(gpu.supported, cells, strict=True):
                value = int(cell) if cell.lstrip(b"-").isdigit() else None
                out.append(value * 1000 if value is not None and QUERIES[q][0] == "temp_c" else value)
        return out

    def labels(self) -> dict[str, str]:
        return {_column(g.index, "util_pct"): f"{g.name} (GPU {g.index})" for g in self.gpus}

    def power_channels(self) -> list[PowerChannel]:
        channels = []
        for g in self.gpus:
            names = {QUERIES[q][0] for q in g.supported}
            if not names & {"power_mw", "energy_mj"}:
                continue
            channels.append(
                PowerChannel(
                    f"gpu{g.index}",
                    self.name,
                    "part",
                    energy_column=_column(g.index, "energy_mj") if "energy_mj" in names else None,
                    energy_unit_j=1e-3,
                    power_column=_column(g.index, "power_mw") if "power_mw" in names else None,
                )
            )
        return channels

    def close(self) -> None:
        if self.gpus:
            self._lib().nvmlShutdown()
            self.gpus = []
