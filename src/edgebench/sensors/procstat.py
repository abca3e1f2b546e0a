"""Per-core CPU time from ``/proc/stat``: the input of the characterization paper's utilization (eq. 1-2)."""

from __future__ import annotations

from edgebench.host.cpuset import parse_cpu_list
from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import Availability, Reading, Sensor, Source, complete_lines, missing, present

# Field order of a cpuN line: user nice system idle iowait irq softirq steal guest guest_nice.
# guest time is already counted in user, so it is left out of "active".
_ACTIVE_FIELDS = (1, 2, 3, 6, 7, 8)
_IDLE_FIELDS = (4, 5)


def parse_core_ticks(stat: bytes) -> dict[int, tuple[int, int]]:
    """``{core: (active_ticks, idle_ticks)}`` from ``/proc/stat`` text (possibly cut after the cpu lines)."""
    ticks: dict[int, tuple[int, int]] = {}
    for line in complete_lines(stat):
        if line.startswith(b"cpu") and line[3:4].isdigit():
            f = line.split()
            f += [b"0"] * (9 - len(f))  # very old kernels have fewer fields
            ticks[int(f[0][3:])] = (
                sum(int(f[i]) for i in _ACTIVE_FIELDS),
                sum(int(f[i]) for i in _IDLE_FIELDS),
            )
        elif line.startswith(b"intr"):
            break
    return ticks


class CpuTimeSensor(Sensor):
    """Cumulative active and idle ticks (USER_HZ) of every core; a core that goes offline reads as ``None``."""

    name = "cpu_time"

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self.cores: tuple[int, ...] = ()
        self._max_bytes = 4096

    def available(self) -> Availability:
        if not self.sysfs.exists("/proc/stat"):
            return missing("/proc/stat is missing (not Linux, or /proc is not mounted)")
        return present()

    def open(self) -> tuple[str, ...]:
        text = self.sysfs.read_text("/proc/stat").encode()
        listed = set(parse_core_ticks(text))
        # Phones hot-unplug cores; "present" keeps a column for every core that may come back online.
        present_text = self.sysfs.read_str("/sys/devices/system/cpu/present")
        if present_text:
            listed.update(parse_cpu_list(present_text))
        self.cores = tuple(sorted(listed))
        # Read only the cpu lines (the intr line can be kilobytes), with room for the counters to grow digits.
        cpu_part = text.find(b"\nintr")
        self._max_bytes = (cpu_part if cpu_part > 0 else len(text)) * 2 + 256
        return tuple(col for c in self.cores for col in (f"cpu{c}_active_ticks", f"cpu{c}_idle_ticks"))

    def sources(self) -> list[Source]:
        return [Source("/proc/stat", self._max_bytes)]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        ticks = parse_core_ticks(blobs[0] or b"")
        out: Reading = []
        for core in self.cores:
            out.extend(ticks.get(core, (None, None)))
        return out
