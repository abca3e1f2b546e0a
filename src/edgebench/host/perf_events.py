"""Linux perf event counters of this process (and the threads it starts) through ``perf_event_open(2)``, by ctypes.

DNNTune profiles cache references and LLC misses per layer; the kernel's perf events are where those counts come
from on Linux and Android alike, by perf's own event names.  A counter is opened with ``inherit`` so the
framework's intra-op threads started later count too (``read`` sums the live children), and ``read`` returns
the count with the time it was enabled and running, so a multiplexed hardware counter is scaled, not reported short.

Hardware events need a PMU the kernel exposes: in most VMs (this project's development machine among them)
``perf_event_open`` answers ENOENT for every hardware event while the software ones (page faults, context
switches, task clock) work; :func:`open_counters` refuses such an event in one line that says so.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from dataclasses import dataclass

from edgebench.errors import shortened

#: perf's event names -> (``perf_event_attr.type``, ``config``): PERF_TYPE_HARDWARE = 0, PERF_TYPE_SOFTWARE = 1.
EVENTS: dict[str, tuple[int, int]] = {
    "cycles": (0, 0),
    "instructions": (0, 1),
    "cache-references": (0, 2),
    "cache-misses": (0, 3),
    "branch-instructions": (0, 4),
    "branch-misses": (0, 5),
    "cpu-clock": (1, 0),
    "task-clock": (1, 1),
    "page-faults": (1, 2),
    "context-switches": (1, 3),
    "cpu-migrations": (1, 4),
    "minor-faults": (1, 5),
    "major-faults": (1, 6),
}
HARDWARE = tuple(name for name, (kind, _) in EVENTS.items() if kind == 0)
SOFTWARE = tuple(name for name, (kind, _) in EVENTS.items() if kind == 1)
#: ``task-clock`` and ``cpu-clock`` count nanoseconds; every other event counts occurrences.
NANOSECOND_EVENTS = ("task-clock", "cpu-clock")

#: ``__NR_perf_event_open`` by machine (``uname -m``).
_SYSCALL = {"x86_64": 298, "aarch64": 241, "armv7l": 364, "armv8l": 364, "i686": 336, "riscv64": 241}
_ATTR_SIZE = 128  # PERF_ATTR_SIZE_VER7; the kernel accepts any known size
_FLAG_DISABLED, _FLAG_INHERIT, _FLAG_EXCLUDE_KERNEL, _FLAG_EXCLUDE_HV = 1 << 0, 1 << 1, 1 << 5, 1 << 6
#: Counting starts when the process execs (``perf stat``'s way): a launcher's own code between fork and exec
#: is not counted.
_FLAG_ENABLE_ON_EXEC = 1 << 12
_READ_FORMAT = 1 | 2  # PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING


class CounterError(ValueError):
    """An event this kernel will not count for this process; the message is the one line a user sees."""


def parse_counters(text: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``cache-misses,task-clock`` -> the names, each one perf knows (the error lists them)."""
    given = text.split(",") if isinstance(text, str) else list(text)
    if not all(isinstance(n, str) for n in given):
        raise ValueError(f"{shortened(repr(text))}: give perf's event names, e.g. cache-misses,task-clock")
    names = [n.strip() for n in given if n.strip()]
    if not names and isinstance(text, str):  # ',,,': counters asked for, none named
        raise ValueError(f"{text!r} names no event; give perf's names, e.g. cache-misses,task-clock")
    unknown = [n for n in names if n not in EVENTS]
    if unknown:
        raise ValueError(f"unknown perf event {unknown[0]!r}; known: {', '.join(EVENTS)}")
    return tuple(dict.fromkeys(names))


def _why(name: str, code: int) -> str:
    if code == errno.ENOENT and name in HARDWARE:
        return (
            f"{name} is a hardware event and this kernel exposes no hardware PMU to it (perf_event_open: ENOENT; "
            f"a VM without PMU passthrough answers so); software events work here: {', '.join(SOFTWARE)}"
        )
    if code in (errno.EACCES, errno.EPERM):
        level = _read_paranoid()
        return (f"{name}: perf_event_open refused ({errno.errorcode[code]}); /proc/sys/kernel/perf_event_paranoid is "
                f"{level}: run as root or set it to 2 or lower")  # fmt: skip
    if code == errno.ENOSYS:
        return f"{name}: this kernel has no perf_event_open (built without CONFIG_PERF_EVENTS)"
    return f"{name}: perf_event_open failed: {os.strerror(code)} ({errno.errorcode.get(code, code)})"


def _read_paranoid() -> str:
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return f.read().strip()
    except OSError:
        return "unreadable"


def _open(name: str, pid: int, on_exec: bool = False) -> int:
    number = _SYSCALL.get(platform.machine())
    if number is None:
        raise CounterError(f"{name}: perf_event_open's syscall number is not known for {platform.machine()}")
    kind, config = EVENTS[name]
    attr = bytearray(_ATTR_SIZE)
    # type u32, size u32, config u64, sample_period u64, sample_type u64, read_format u64, flags u64.
    flags = _FLAG_INHERIT | _FLAG_EXCLUDE_HV | (_FLAG_EXCLUDE_KERNEL if kind == 0 else 0)
    if on_exec:
        flags |= _FLAG_DISABLED | _FLAG_ENABLE_ON_EXEC
    struct.pack_into("=IIQQQQQ", attr, 0, kind, _ATTR_SIZE, config, 0, 0, _READ_FORMAT, flags)
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(bytes(attr), _ATTR_SIZE)
    fd = libc.syscall(number, buf, pid, -1, -1, ctypes.c_ulong(0))
    if fd < 0:
        raise CounterError(_why(name, ctypes.get_errno()))
    return int(fd)


@dataclass
class Counters:
    """Open counters, read together; :meth:`close` releases them."""

    names: tuple[str, ...]
    fds: tuple[int, ...]

    def read(self) -> tuple[int, ...]:
        """Each counter's count so far, scaled by enabled/running time where the kernel multiplexed it."""
        out = []
        for fd in self.fds:
            value, enabled, running = struct.unpack("=QQQ", os.read(fd, 24))
            out.append(value if running in (0, enabled) else round(value * enabled / running))
        return tuple(out)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = ()


def open_counters(names: tuple[str, ...], pid: int = 0, *, on_exec: bool = False) -> Counters:
    """Open ``names`` for ``pid`` (0: this process) on any CPU, counting its future threads and children too;
    ``on_exec``: disabled until ``pid`` next calls ``execve`` (a forked child waiting to exec the user's command).

    Raises :class:`CounterError` naming the first event refused and why; the others opened are closed again.
    """
    fds: list[int] = []
    try:
        for name in names:
            fds.append(_open(name, pid, on_exec))
    except CounterError:
        for fd in fds:
            os.close(fd)
        raise
    return Counters(tuple(names), tuple(fds))


def refusal(names: tuple[str, ...]) -> str | None:
    """Why this machine cannot count ``names`` (one line), or None when it can: open and close them once."""
    try:
        open_counters(names).close()
    except CounterError as exc:
        return str(exc)
    return None
