"""What every sensor is: a set of pseudo-files to poll and a decoder from their bytes to integer columns.

The split is what keeps a 10 ms sampler cheap: during a trial the sampler only ``pread``s each source and appends
the bytes to a file; :meth:`Sensor.decode` turns them into numbers after the trial, outside the measurement.
Columns hold integers in the unit the device exposes (ticks, bytes, kHz, milli-degrees C) and carry the unit in
their name; conversion happens in ``measure``.  A sensor that cannot read says why through
:meth:`Sensor.available` and is left out: it never invents a number.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass

from edgebench.host.sysfs import SysFS

Reading = list[int | None]


@dataclass(frozen=True)
class Availability:
    """Whether a sensor can read on this device, and if not, why and what would fix it."""

    ok: bool
    reason: str = ""

    def __bool__(self) -> bool:
        return self.ok


def present() -> Availability:
    return Availability(True)


def missing(reason: str) -> Availability:
    return Availability(False, reason)


@dataclass(frozen=True)
class Source:
    """One pseudo-file the sampler reads whole (up to ``max_bytes``) at every tick."""

    path: str
    max_bytes: int = 64


class Sensor(ABC):
    """Construct cheaply, check :meth:`available`, :meth:`open`, then poll :meth:`sources` and :meth:`decode`."""

    #: Registry name, e.g. ``cpu_time``.
    name: str = ""
    #: The fastest polling worth its cost: quantities that change slowly (system memory, temperature) are read
    #: every ``min_period_ms`` even when the sampler ticks faster; the rows in between hold no value for them.
    min_period_ms: float = 0.0

    def __init__(self, sysfs: SysFS, *, pid: int | None = None) -> None:
        self.sysfs = sysfs
        #: The process under measurement, for sensors that watch one (``process``); others ignore it.
        self.pid = pid

    @abstractmethod
    def available(self) -> Availability:
        """Whether this device exposes what the sensor reads; cheap, leaves nothing open."""

    @abstractmethod
    def open(self) -> tuple[str, ...]:
        """Discover what to read and return the column names that :meth:`decode` fills, in order."""

    @abstractmethod
    def sources(self) -> list[Source]:
        """The files to poll, fixed once :meth:`open` has run."""

    @abstractmethod
    def decode(self, blobs: list[bytes | None]) -> Reading:
        """One value per column from one poll of :meth:`sources` (``None`` where a read failed)."""

    def labels(self) -> dict[str, str]:
        """Human names for columns where the column name alone is cryptic (e.g. a thermal zone's type)."""
        return {}

    def read(self) -> Reading:
        """Poll and decode once, in-process (``edgebench sensors``, tests); the sampler does the two apart."""
        blobs: list[bytes | None] = []
        for source in self.sources():
            try:
                with self.sysfs.open(source.path) as f:
                    blobs.append(f.read(source.max_bytes))
            except OSError:
                blobs.append(None)
        return self.decode(blobs)


def complete_lines(blob: bytes) -> list[bytes]:
    """Lines of a read that may have been cut at ``max_bytes``: a last line without its newline is dropped."""
    lines = blob.split(b"\n")
    return lines[:-1]


def int_or_none(blob: bytes | None) -> int | None:
    if not blob:
        return None
    try:
        return int(blob.split()[0])
    except (ValueError, IndexError):
        return None


_UNSAFE = re.compile(r"[^a-z0-9]+")


def column_token(text: str) -> str:
    """Make a device-provided name (``cpu-thermal``, ``CPU GPU``) safe to use inside a CSV column name."""
    return _UNSAFE.sub("_", text.lower()).strip("_") or "unnamed"
