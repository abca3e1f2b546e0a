"""System memory from ``/proc/meminfo``: what the whole device has left while a model trains."""

from __future__ import annotations

from edgebench.sensors.base import Availability, Reading, Sensor, Source, complete_lines, missing, present

_KEYS = (b"MemAvailable", b"MemFree")


class MemorySensor(Sensor):
    """``MemAvailable`` and ``MemFree`` in bytes (``MemTotal`` is constant and lives in the environment)."""

    name = "memory"
    min_period_ms = 100.0

    def available(self) -> Availability:
        if not self.sysfs.exists("/proc/meminfo"):
            return missing("/proc/meminfo is missing")
        return present()

    def open(self) -> tuple[str, ...]:
        return ("mem_available_bytes", "mem_free_bytes")

    def sources(self) -> list[Source]:
        # Both keys sit in the first three lines.
        return [Source("/proc/meminfo", 256)]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        kib: dict[bytes, int] = {}
        for line in complete_lines(blobs[0] or b""):
            key, _, rest = line.partition(b":")
            if key in _KEYS:
                kib[key] = int(rest.split()[0])
        return [kib[k] * 1024 if k in kib else None for k in _KEYS]
