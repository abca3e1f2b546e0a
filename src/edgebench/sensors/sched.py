"""How long the watched process's threads waited for a CPU: the kernel's scheduler counters, per thread.

``/proc/<pid>/task/<tid>/schedstat`` holds three numbers per thread: nanoseconds on a CPU, nanoseconds *runnable
but waiting on a run queue*, and the number of times it was scheduled in.  The wait is what another process on
the same cores takes from the worker, measured by the scheduler at the nanosecond (not in the 10 ms ticks of
``/proc/stat``), so contention shows over any window, a 0.28 s trial's included.
``/proc/<pid>/task/<tid>/status``'s ``nonvoluntary_ctxt_switches`` counts the times a thread was taken off a CPU it
still wanted (preempted, mostly by another runnable task).  Both are per thread (``/proc/<pid>/schedstat`` and
``/proc/<pid>/status`` are the main thread's alone), so a process's figure is the sum over its ``task/`` folder.

The worker reads both about its own measured steps (:func:`read_threads`, exact at the window's edges); a device's
sampler reads the schedstat files every 50 ms (:class:`SchedSensor`, for ``--command`` trials, whose workload is
not edgebench's), whose sums :mod:`edgebench.measure.hygiene` takes over the window.
"""

from __future__ import annotations

from dataclasses import dataclass

from edgebench.host.sysfs import SysFS
from edgebench.sensors.base import Availability, Reading, Source, missing, present
from edgebench.sensors.process import ProcFileSensor


def parse_schedstat(blob: bytes | str) -> tuple[int, int] | None:
    """``(on_cpu_ns, run_queue_wait_ns)`` summed over the lines of one or more schedstat files (one per thread);
    None where no line parses."""
    text = blob.decode(errors="replace") if isinstance(blob, bytes) else blob
    run = wait = 0
    seen = False
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 2 or not (fields[0].isdigit() and fields[1].isdigit()):
            continue
        run, wait, seen = run + int(fields[0]), wait + int(fields[1]), True
    return (run, wait) if seen else None


def parse_involuntary_switches(status: str) -> int | None:
    """``nonvoluntary_ctxt_switches`` of one ``status`` file, or None where it has none."""
    for line in status.splitlines():
        if line.startswith("nonvoluntary_ctxt_switches:"):
            return int(line.split()[1])
    return None


@dataclass(frozen=True)
class ThreadCounts:
    """One thread's scheduler counters at one moment."""

    on_cpu_ns: int
    run_queue_wait_ns: int
    involuntary_switches: int | None


def read_threads(sysfs: SysFS, pid: int | str = "self") -> dict[str, ThreadCounts]:
    """Every thread of ``pid`` by its id, as its schedstat and status read now; empty where the kernel exposes no
    schedstat (a kernel without ``CONFIG_SCHED_INFO``) or the process is gone.  A thread that ends between listing
    and reading is left out."""
    out: dict[str, ThreadCounts] = {}
    for path in sysfs.glob(f"/proc/{pid}/task/*/schedstat"):
        folder = path.rsplit("/", 1)[0]
        try:
            counts = parse_schedstat(sysfs.read_text(path))
            status = sysfs.read_text(f"{folder}/status")
        except OSError:
            continue
        if counts is not None:
            out[folder.rsplit("/", 1)[1]] = ThreadCounts(*counts, parse_involuntary_switches(status))
    return out


def growth(start: dict[str, ThreadCounts], end: dict[str, ThreadCounts]) -> ThreadCounts | None:
    """What the threads alive at ``end`` did since ``start`` (a thread born in between counts from 0); None where
    either reading is empty.  A thread that ended in between takes its counts with it."""
    if not start or not end:
        return None
    zero = ThreadCounts(0, 0, 0)
    run = sum(c.on_cpu_ns - start.get(t, zero).on_cpu_ns for t, c in end.items())
    wait = sum(c.run_queue_wait_ns - start.get(t, zero).run_queue_wait_ns for t, c in end.items())
    switches: int | None = 0
    for tid, c in end.items():
        before = start.get(tid, zero).involuntary_switches
        if c.involuntary_switches is None or before is None or switches is None:
            switches = None
        else:
            switches += c.involuntary_switches - before
    return ThreadCounts(max(run, 0), max(wait, 0), None if switches is None else max(switches, 0))


class SchedSensor(ProcFileSensor):
    """``proc_on_cpu_ns`` and ``proc_run_queue_wait_ns`` of ``pid``, summed over its threads; ``None`` once it has
    exited.  Its one source is a pattern, ``/proc/<pid>/task/*/schedstat``: each sampler (the Python one, the
    device-side sh loop, the native one) reads every file it matches at its ticks, one line per thread."""

    name = "sched"
    proc_file = "task"
    #: Every 5th tick at 10 ms: listing the task folder and reading each thread's file is the dearest read of a
    #: tick (the native sampler's CPU at 10 ms here: 1.9% of a core every tick, 1.4% every 50 ms), and the hygiene
    #: check takes sums over the window, which a 50 ms grid still brackets.
    min_period_ms = 50.0

    def available(self) -> Availability:
        if self.pid is None:
            return missing("no process to watch (give the worker's pid, or --pid)")
        if self.sysfs.glob(f"/proc/{self.pid}/task/*/schedstat"):
            return present()
        if not self.sysfs.exists(f"/proc/{self.pid}/stat"):
            return missing(f"/proc/{self.pid} is missing: process {self.pid} is not running")
        return missing("the kernel keeps no scheduler statistics (/proc/<pid>/task/*/schedstat: CONFIG_SCHED_INFO)")

    def open(self) -> tuple[str, ...]:
        return ("proc_on_cpu_ns", "proc_run_queue_wait_ns")

    def sources(self) -> list[Source]:
        return [Source(f"/proc/{self.pid}/task/*/schedstat", 4096)]

    def decode(self, blobs: list[bytes | None]) -> Reading:
        counts = parse_schedstat(blobs[0]) if blobs[0] else None
        return [None, None] if counts is None else list(counts)
