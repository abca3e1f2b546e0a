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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from edgebench.host.sysfs import PatternFiles, PseudoFile, SysFS

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


def readable(sysfs: SysFS, path: str, denied: str) -> Availability:
    """Present if ``path`` can be read now; else why: ``denied`` (how to get access) or the kernel's error."""
    try:
        sysfs.read_text(path)
    except PermissionError:
        return missing(f"{path} is not readable: {denied}")
    except OSError as exc:
        return missing(f"{path} cannot be read: {exc.strerror or exc}")
    return present()


@dataclass(frozen=True)
class Source:
    """One pseudo-file the sampler reads whole (up to ``max_bytes``) at every tick; a path with one ``*`` component
    (``/proc/<pid>/task/*/schedstat``) is every file it matches, listed again at each tick, their whole lines one
    after another within ``max_bytes`` (:func:`edgebench.host.sysfs.whole_lines_within`).

    A quantity that is not a file (NVML) gives ``poll``: a callable returning the bytes to record, called where the
    file would be read.  ``path`` then only names it (``nvml:0``).  The sampler's loop stays the same either way.
    """

    path: str
    max_bytes: int = 64
    poll: Callable[[], bytes] | None = None


class PolledSource:
    """A :class:`Source` with ``poll`` behind the same ``read(size)`` a :class:`PseudoFile` has.

    Any error of the callable (NVML raises its own exception types) becomes ``OSError``, which the sampler
    records as a failed read, exactly as for a file.
    """

    __slots__ = ("_poll", "path")

    def __init__(self, path: str, poll: Callable[[], bytes]) -> None:
        self.path = path
        self._poll = poll

    def read(self, size: int = 65536) -> bytes:
        try:
            return self._poll()[:size]
        except Exception as exc:
            raise OSError(f"{self.path}: {exc}") from exc

    def close(self) -> None:
        return None

    def __enter__(self) -> PolledSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_source(sysfs: SysFS, source: Source) -> PseudoFile | PolledSource | PatternFiles:
    """Something to ``read(size)`` the source from: an open pseudo-file, its ``poll`` callable, or every file its
    pattern matches (a path with a ``*`` component)."""
    if source.poll is not None:
        return PolledSource(source.path, source.poll)
    if "*" in source.path:
        return PatternFiles(sysfs, source.path)
    return sysfs.open(source.path)


Scope = Literal["total", "part", "sub"]


@dataclass(frozen=True)
class PowerChannel:
    """A power or energy quantity a sensor's columns carry, and how it relates to the device's total.

    ``scope`` says how channels add up: ``total`` measures the whole device or board (Jetson ``VDD_IN``, a phone's
    battery plus USB, RAPL ``psys``); ``part`` is one component that does not overlap the other parts (a RAPL
    package, DRAM, an NVIDIA GPU), so parts add up when no total exists; ``sub`` lies inside a total or a part (RAPL
    core inside its package, Jetson ``VDD_SYS_CPU`` inside ``VDD_IN``) and is only ever shown on its own.

    ``energy_column`` is a cumulative counter (already unwrapped, so it only grows) in units of ``energy_unit_j``
    joules; ``power_column`` is instantaneous power in mW.  A channel has one or both; counters are preferred.
    """

    name: str
    source: str
    scope: Scope
    energy_column: str | None = None
    energy_unit_j: float = 1e-6
    power_column: str | None = None


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

    def power_channels(self) -> list[PowerChannel]:
        """The power and energy quantities among this sensor's columns (none for most sensors)."""
        return []

    def read(self) -> Reading:
        """Poll and decode once, in-process (``edgebench sensors``, tests); the sampler does the two apart."""
        blobs: list[bytes | None] = []
        for source in self.sources():
            try:
                with open_source(self.sysfs, source) as f:
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


class CounterUnwrap:
    """Turns a counter that wraps to 0 past ``range_max`` (RAPL ``energy_uj``) into one that only grows.

    Fed the readings in time order (the sampler decodes records in order); a reading below the previous one means
    the counter wrapped once, so ``range_max`` is added from then on (the modulus powercap tools use).  At any
    sampling period the sampler uses, a counter cannot wrap twice between two readings (RAPL's package counter
    takes minutes at full power).
    """

    __slots__ = ("_last", "_offset", "range_max", "wraps")

    def __init__(self, range_max: int | None) -> None:
        self.range_max = range_max
        self._last: int | None = None
        self._offset = 0
        self.wraps = 0

    def __call__(self, value: int | None) -> int | None:
        if value is None:
            return None
        if self._last is not None and value < self._last and self.range_max:
            self._offset += self.range_max
            self.wraps += 1
        self._last = value
        return value + self._offset


_UNSAFE = re.compile(r"[^a-z0-9]+")


def column_token(text: str) -> str:
    """Make a device-provided name (``cpu-thermal``, ``CPU GPU``) safe to use inside a CSV column name."""
    return _UNSAFE.sub("_", text.lower()).strip("_") or "unnamed"
