"""Memory of one process as ``top`` shows it (VIRT, RES, SHR), from ``/proc/<pid>/statm``.

The MNN-based suite recorded these three from ``top`` for its ``performance_<Net>.csv``; ``statm`` gives the same
numbers (in pages) for the price of one small read.
"""

from __future__ import annotations

import os

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import Availability, Reading, Sensor, Source, missing, present


class ProcessMemorySensor(Sensor):
    """``proc_virt_bytes``, ``proc_res_bytes``, ``proc_shr_bytes`` of ``pid``; ``None`` once it has exited."""

    name = "process_memory"
    min_period_ms = 100.0

    def __init__(self, sysfs: SysFS, *, pid: int | None = None, page_size_bytes: int | None = None) -> None:
        super().__init__(sysfs, pid=pid)
        self.page_size_bytes = page_size_bytes or os.sysconf("SC_PAGE_SIZE")

    def available(self) -> Availability:
        if self.pid is None:
            return missing("no process to watch (give the worker's pid, or --pid)")
        if not self.sysfs.exists(f"/proc/{self.pid}/statm"):
            return missing(f"/proc/{self.pid}/statm is missing: process {self.pid} is not running")
        return present()

    def open(self) -> tuple[str, ...]:
        return ("proc_virt_bytes", "proc_res_bytes", "proc_shr_bytes")

    def sources(self) -> list[Source]:
        return [Source(f"/proc/{self.pid}/statm", 128)]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        fields = (blobs[0] or b"").split()
        if len(fields) < 3:
            return [None, None, None]
        try:
            return [int(f) * self.page_size_bytes for f in fields[:3]]
        except ValueError:
            return [None, None, None]
