"""Current frequency of every core, read once per cpufreq policy (cores of a policy share one clock)."""

from __future__ import annotations

from edgebench.host.cpu import FreqPolicy, freq_policies
from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import Availability, Reading, Sensor, Source, int_or_none, missing, present


class CpuFreqSensor(Sensor):
    """``cpuN_freq_khz`` for every core of every policy, from ``scaling_cur_freq``."""

    name = "cpu_freq"

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self._policies: list[FreqPolicy] = []
        self._sources: list[Source] = []

    def available(self) -> Availability:
        if not freq_policies(self.sysfs):
            return missing("no cpufreq policies under /sys/devices/system/cpu (virtual machine or container)")
        return present()

    def open(self) -> tuple[str, ...]:
        self._policies = freq_policies(self.sysfs)
        for policy in self._policies:
            path = f"/sys/devices/system/cpu/cpufreq/{policy.name}/scaling_cur_freq"
            if not self.sysfs.exists(path):
                path = f"/sys/devices/system/cpu/cpu{policy.cores[0]}/cpufreq/scaling_cur_freq"
            self._sources.append(Source(path, 32))
        return tuple(f"cpu{c}_freq_khz" for p in self._policies for c in p.cores)

    def sources(self) -> list[Source]:
        return self._sources

    def decode(self, blobs: list[bytes | None]) -> Reading:
        out: Reading = []
        for policy, blob in zip(self._policies, blobs, strict=True):
            # A policy whose cores are all offline reads EBUSY or nothing: None, not a stale value.
            out.extend([int_or_none(blob)] * len(policy.cores))
        return out
