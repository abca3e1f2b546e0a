"""Process lifetimes: children that never outlive the launcher that started them, and whether a process still runs."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
from collections.abc import Iterator
from types import FrameType

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent exits, however the parent dies (even SIGKILL).

    Without it a launcher killed mid-sweep leaves a worker training on, skewing every later measurement.
    A no-op where ``prctl`` is unavailable (not Linux).
    """
    parent = os.getppid()
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return
    libc = ctypes.CDLL(libc_name, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGKILL)


def process_running(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (one of another user's counts as running: it is not ours).

    A zombie does not run: a process killed after its parent died waits as one until something reaps it, forever
    where the machine's init does not reap orphans (some containers and micro-VMs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rpartition(b")")[2].split()[0]
    except FileNotFoundError:  # it ended just now; without /proc at all (not Linux) what kill(0) said stands
        return not os.path.isdir("/proc/self")
    except (OSError, IndexError):
        return True
    return state not in (b"Z", b"X")


def process_started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, ``/proc/PID/stat`` field 22), or None: with its pid, it
    names one process, where a pid alone may name a later one that got the number again."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rpartition(b")")[2].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def same_process_running(pid: int, started: int | None) -> bool:
    """Whether the process recorded as ``(pid, started)`` still runs (not a later one given the same pid)."""
    if not process_running(pid):
        return False
    return started is None or process_started(pid) in (None, started)


#: Signals that end a launcher from outside: ``kill``, a supervisor or ``timeout`` (SIGTERM), a closed terminal or a
#: dropped SSH session to the workstation (SIGHUP).  Python's default for both ends the process at once, skipping
#: all cleanup: the worker trains on and its trial folder stays.
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the launcher is, so that every ``finally`` (frequency restore, the worker
    stopped, its folder removed) runs as for Ctrl-C."""


@contextlib.contextmanager
def termination_as_interrupt() -> Iterator[None]:
    """Within the block, :data:`TERMINATING_SIGNALS` raise :class:`Terminated` (a ``KeyboardInterrupt``)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated()

    try:
        previous = {signum: signal.signal(signum, handler) for signum in TERMINATING_SIGNALS}
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        for signum, handler_before in previous.items():
            signal.signal(signum, handler_before)
