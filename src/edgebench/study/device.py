"""What the target offers a study: cores and their clusters, a GPU, power sensors, frequencies, memory, runtimes.

Read once before planning, through the target's own ``SysFS`` (a remote device's tree, or ``--sysfs-root``), so the
plan leaves out what the device cannot run and each "cannot be checked here" can name what was missing.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from edgebench.host.cpu import freq_policies
from edgebench.host.cpuset import format_cpu_list
from edgebench.targets import Target
from edgebench.units import format_size

POWER_SENSORS = ("jetson_power", "rapl", "power_supply", "odpm", "nvml")
GPU_SENSORS = ("jetson_gpu", "nvml")


@dataclass(frozen=True)
class DeviceFacts:
    allowed: tuple[int, ...]
    #: Usable cores of each cpufreq cluster, slowest cluster first (empty without cpufreq).
    clusters: tuple[tuple[int, ...], ...]
    frequencies: tuple[int, ...]
    power_sensors: tuple[str, ...]
    gpu_sensors: tuple[str, ...]
    thermal: bool
    memory_available_bytes: int | None
    runtimes: tuple[str, ...]
    #: torch reaches a CUDA GPU on the target (a Jetson's or a discrete one): GPU trials can run.
    cuda: bool = False

    @property
    def big_little(self) -> bool:
        return len([c for c in self.clusters if c]) >= 2

    def describe(self) -> str:
        parts = [f"{len(self.allowed)} usable cores (cpu {format_cpu_list(self.allowed)})"]
        if self.big_little:
            parts.append("clusters " + " | ".join(format_cpu_list(c) for c in self.clusters if c))
        parts.append("GPU: " + (", ".join(self.gpu_sensors) or "none") + (" (CUDA)" if self.cuda else ""))
        parts.append("power: " + (", ".join(self.power_sensors) or "none"))
        parts.append(f"{len(self.frequencies)} settable frequencies" if self.frequencies else "no cpufreq table")
        if self.memory_available_bytes:
            parts.append(f"{format_size(self.memory_available_bytes)} available")
        parts.append("runtimes " + ", ".join(self.runtimes))
        return "; ".join(parts)


def probe(target: Target) -> DeviceFacts:
    from edgebench.agents.python.budget import available_memory_bytes
    from edgebench.sensors.inventory import inventory

    sysfs = target.sysfs()
    allowed = tuple(target.allowed_cores())
    policies = sorted(freq_policies(sysfs), key=lambda p: (p.cpuinfo_max_khz or p.max_khz or 0, p.cores))
    clusters = tuple(tuple(sorted(set(p.cores) & set(allowed))) for p in policies)
    freqs = tuple(sorted({f for p in policies for f in (p.available_khz or ())}))
    sensors = {s.name: s for s in inventory(sysfs)}
    available = {n for n, s in sensors.items() if s.available}
    runtimes = ["torch"]
    if target.name == "local":  # another device's runtimes are its own: its worker says which when a trial runs
        runtimes += [name for name, module in (("onnxruntime", "onnxruntime"), ("mnn", "MNN"))
                     if importlib.util.find_spec(module) is not None]  # fmt: skip
        # LiteRT runs the zoo's LeNet once it is converted: the runtime and its converter
        if all(importlib.util.find_spec(m) is not None for m in ("ai_edge_litert", "litert_torch")):
            runtimes.append("litert")
    return DeviceFacts(
        allowed=allowed,
        clusters=clusters,
        frequencies=freqs,
        power_sensors=tuple(n for n in POWER_SENSORS if n in available),
        gpu_sensors=tuple(n for n in GPU_SENSORS if n in available),
        thermal="thermal" in available,
        memory_available_bytes=available_memory_bytes(sysfs),
        runtimes=tuple(runtimes),
        cuda=target.missing_device("torch", "cuda") is None,
    )
