"""Memory of one process as ``top`` shows it (VIRT, RES, SHR), from ``/proc/<pid>/statm``.

The MNN-based suite recorded these three from ``top`` for its ``performance_<Net>.csv``; ``statm`` gives the same
numbers (in pages) for the price of one small read.
"""

from __future__ import annotations

from edgebench.sensors.base import Reading, Source
from edgebench.sensors.process import ProcFileSensor


class ProcessMemorySensor(ProcFileSensor):
    """``proc_virt_bytes``, ``proc_res_bytes``, ``proc_shr_bytes`` of ``pid``; ``None`` once it has exited."""

    name = "process_memory"
    proc_file = "statm"
    min_period_ms = 100.0

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
