"""Process lifetimes: children that never outlive the launcher that started them, and whether a process still runs."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import queue
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

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
def _handling(signums: tuple[int, ...], handler: Callable[[int, FrameType | None], Any]) -> Iterator[None]:
    """``handler`` for ``signums`` within the block, the handlers before it back after it; nothing changes off the
    main thread (only it may set handlers, and only it runs them)."""
    try:
        previous = {signum: signal.signal(signum, handler) for signum in signums}
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        for signum, handler_before in previous.items():
            signal.signal(signum, handler_before)


@contextlib.contextmanager
def termination_as_interrupt() -> Iterator[None]:
    """Within the block, :data:`TERMINATING_SIGNALS` raise :class:`Terminated` (a ``KeyboardInterrupt``)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated()

    with _handling(TERMINATING_SIGNALS, handler):
        yield


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Ctrl-C and :data:`TERMINATING_SIGNALS` that arrive within the block are delivered when it ends, to the
    handlers in place before it.

    Why: a child started with ``subprocess.Popen`` exists before ``Popen`` returns its handle; an interrupt raised
    in between (a Ctrl-C while the launcher waits for the exec) left the caller no process to stop, and a trial's
    worker, in a session of its own, trained on after its launcher had exited."""
    held: list[int] = []
    try:
        with _handling((signal.SIGINT, *TERMINATING_SIGNALS), lambda signum, _frame: held.append(signum)):
            yield
    finally:
        for signum in dict.fromkeys(held):
            signal.raise_signal(signum)


#: Child commands run at once by :func:`run_children` (a ``targets:`` axis of a sweep): each is a Python process
#: holding a store connection and a device; a list of hundreds started hundreds at once.
CHILDREN_AT_ONCE = 8


def run_children(
    commands: dict[str, list[str]], on_line: Callable[[str, str], None], *, at_once: int = CHILDREN_AT_ONCE
) -> dict[str, int]:
    """Run each command (by key) with at most ``at_once`` alive together, handing every line each prints to
    ``on_line(key, line)``; returns the exit codes of those that ran.  Ctrl-C reaches the running ones (same process
    group) and starts no other; they are waited for, so that each cleans up."""
    pending = list(commands.items())
    running: dict[str, subprocess.Popen[str]] = {}
    ended: queue.Queue[str] = queue.Queue()
    codes: dict[str, int] = {}

    def relay(key: str, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            on_line(key, line.rstrip("\n"))
        proc.wait()
        ended.put(key)

    try:
        while pending or running:
            while pending and len(running) < max(at_once, 1):
                key, argv = pending.pop(0)
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                running[key] = proc
                threading.Thread(target=relay, args=(key, proc), daemon=True).start()
            key = ended.get()
            codes[key] = running.pop(key).returncode
    finally:
        for proc in running.values():  # interrupted: they got the signal too; let them put their devices back
            proc.wait()
    return codes
