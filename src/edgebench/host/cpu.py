"""What the device's CPU is: online cores, model name, cpufreq policies and governors."""

from __future__ import annotations

import re
from dataclasses import dataclass

from edgebench.host.cpuset import parse_cpu_list
from edgebench.host.sysfs import SysFS
from edgebench.records.throttle import PolicyLimit

_CPU = "/sys/devices/system/cpu"
_CPU_NUMBER = re.compile(r"/(?:cpu|policy)(\d+)")


def online_cores(sysfs: SysFS) -> tuple[int, ...]:
    """Online core ids, from ``/sys/devices/system/cpu/online`` or else the ``cpuN`` lines of ``/proc/stat``."""
    listed = sysfs.read_str(f"{_CPU}/online")
    if listed:
        return parse_cpu_list(listed)
    try:
        stat = sysfs.read_text("/proc/stat")
    except OSError:
        return ()
    return tuple(int(line.split()[0][3:]) for line in stat.splitlines() if line.startswith("cpu") and line[3].isdigit())


def cpu_model(sysfs: SysFS) -> str | None:
    """Marketing name of the CPU: ``model name`` on x86, ``Hardware``/``Model`` on Arm boards and phones."""
    try:
        text = sysfs.read_text("/proc/cpuinfo")
    except OSError:
        return None
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    for key in ("model name", "Model", "Hardware", "cpu model", "Processor"):
        if fields.get(key):
            return fields[key]
    return None


@dataclass(frozen=True)
class FreqPolicy:
    """One cpufreq policy: the cores that share a clock, and its limits (kHz)."""

    name: str
    cores: tuple[int, ...]
    governor: str | None
    min_khz: int | None
    max_khz: int | None
    cpuinfo_max_khz: int | None
    available_khz: tuple[int, ...]
    #: The clock the ``userspace`` governor was told to hold (``scaling_setspeed``); None under other governors.
    setspeed_khz: int | None = None


def freq_policies(sysfs: SysFS) -> list[FreqPolicy]:
    """Every cpufreq policy (not cpu0 alone, a defect of the MNN-based suite); empty where cpufreq is absent."""
    policies = []
    # Older kernels (and some vendor trees) have no policyN directories, only cpuN/cpufreq.
    paths = sysfs.glob(f"{_CPU}/cpufreq/policy*") or sysfs.glob(f"{_CPU}/cpu[0-9]*/cpufreq")
    seen: set[tuple[int, ...]] = set()
    for path in paths:
        related = sysfs.read_str(f"{path}/related_cpus") or sysfs.read_str(f"{path}/affected_cpus")
        own = _CPU_NUMBER.search(path)
        cores = tuple(int(c) for c in related.split()) if related else (int(own.group(1)) if own else 0,)
        if cores in seen:
            continue
        seen.add(cores)
        available = sysfs.read_str(f"{path}/scaling_available_frequencies") or ""
        governor = sysfs.read_str(f"{path}/scaling_governor")
        policies.append(
            FreqPolicy(
                name=path.rsplit("/", 1)[-1] if "policy" in path else f"policy{cores[0]}",
                cores=cores,
                governor=governor,
                min_khz=sysfs.read_int(f"{path}/scaling_min_freq"),
                max_khz=sysfs.read_int(f"{path}/scaling_max_freq"),
                cpuinfo_max_khz=sysfs.read_int(f"{path}/cpuinfo_max_freq"),
                available_khz=tuple(sorted(int(f) for f in available.split())),
                setspeed_khz=sysfs.read_int(f"{path}/scaling_setspeed") if governor == "userspace" else None,
            )
        )
    return policies


def policy_limits(sysfs: SysFS) -> list[PolicyLimit]:
    """Each policy's reference clock now, what throttling is judged against: the ``userspace`` governor's
    ``scaling_setspeed`` (a clock chosen on purpose, e.g. by a frequency sweep, is not throttling), else
    ``scaling_max_freq`` (the user's cap), else ``cpuinfo_max_freq``."""
    return [limit for p in freq_policies(sysfs) if (limit := _limit(p)).max_khz]


def _limit(p: FreqPolicy) -> PolicyLimit:
    return PolicyLimit(p.name, p.cores, int(p.setspeed_khz or p.max_khz or p.cpuinfo_max_khz or 0))


#: CPU flags (``/proc/cpuinfo``'s ``flags`` on x86, ``Features`` on Arm) that decide whether int8 inference is fast:
#: the 8-bit dot-product / multiply-accumulate instructions int8 GEMM and convolution kernels are built on.
INT8_FEATURES = (
    "avx512_vnni",  # x86: AVX-512 VNNI (Cascade Lake and later server cores, Ice Lake, Zen 4)
    "avx_vnni",  # x86: VEX-encoded VNNI (Alder Lake and later)
    "avx512_bf16",
    "amx_int8",  # x86: AMX tiles (Sapphire Rapids)
    "asimddp",  # Arm: SDOT/UDOT (Armv8.2 dot product)
    "i8mm",  # Arm: SMMLA int8 matrix multiply (Armv8.6)
    "sve",
    "sve2",
)


def int8_cpu_features(sysfs: SysFS) -> list[str]:
    """The int8-relevant instructions of :data:`INT8_FEATURES` this CPU reports; empty when it has none (or no
    ``/proc/cpuinfo``): int8 kernels then fall back to wider multiply-add sequences and may not beat fp32."""
    try:
        text = sysfs.read_text("/proc/cpuinfo")
    except OSError:
        return []
    flags: set[str] = set()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return [f for f in INT8_FEATURES if f in flags]
