"""Holding a trial to a memory budget without risking the host: a hard limit inside, a watchdog outside.

Inside the worker, ``RLIMIT_DATA`` caps its private writable memory (heap, anonymous mappings: every tensor),
so an allocation beyond the budget fails in the worker instead of pushing the host into swap or the OOM killer.
It was checked to bind with torch loaded: importing torch uses about 220 MB of it and a larger tensor then
fails with "can't allocate memory" (``RLIMIT_AS`` would not do: torch reserves far more address space than it
touches).  Outside, the launcher polls the worker's resident memory and kills it the moment it exceeds the
budget (resident memory also counts shared libraries, which ``RLIMIT_DATA`` does not).  Either way the trial is
recorded ``infeasible`` with the peak it reached.  On CUDA the backend caps its device allocator instead of
``RLIMIT_DATA`` (the driver maps large writable host regions of its own; for torch see
:func:`edgebench.backends.torch.session.limit_gpu_memory`); the watchdog still holds host memory.
"""

from __future__ import annotations

import resource
import subprocess
import time
from dataclasses import dataclass

from edgebench.host.sysfs import SysFS
from edgebench.sensors.process import read_status_kib
from edgebench.units import format_size

POLL_S = 0.02


def apply_memory_budget(budget_bytes: int | None) -> None:
    """Cap this process's data segment (call before importing torch); a no-op without a budget."""
    if budget_bytes is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = budget_bytes if hard == resource.RLIM_INFINITY else min(budget_bytes, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


@dataclass(frozen=True)
class Watch:
    exceeded: bool
    peak_rss_bytes: int | None


def wait_within_budget(proc: subprocess.Popen[str], timeout_s: float, budget_bytes: int, sysfs: SysFS) -> Watch:
    """Wait for ``proc`` like ``proc.wait(timeout_s)``, killing it if its resident memory passes the budget.

    Raises ``subprocess.TimeoutExpired`` as ``wait`` does when the timeout passes first.
    """
    deadline = time.monotonic() + timeout_s
    peak: int | None = None
    while proc.poll() is None:
        # VmHWM, the high-water mark, also catches a spike that rose and fell between two polls.
        kib = read_status_kib(sysfs, proc.pid, "VmHWM") or read_status_kib(sysfs, proc.pid, "VmRSS")
        if kib is not None:
            peak = max(peak or 0, kib * 1024)
            if kib * 1024 > budget_bytes:
                proc.kill()
                proc.wait()
                return Watch(True, peak)
        if time.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
        time.sleep(POLL_S)
    return Watch(False, peak)


def budget_outcome(
    status: str, reason: str, budget_bytes: int, watch: Watch | None, worker_peak_bytes: int | None
) -> tuple[str, str, int | None]:
    """``(status, reason, peak)`` of a trial that ran under a budget: running out of memory means infeasible."""
    peaks = [p for p in (watch.peak_rss_bytes if watch else None, worker_peak_bytes) if p is not None]
    peak = max(peaks) if peaks else None
    reached = f"; peak {format_size(peak)} reached" if peak is not None else ""
    if watch is not None and watch.exceeded:
        return "infeasible", f"needs more than the {format_size(budget_bytes)} memory budget (killed{reached})", peak
    if status == "oom":
        return "infeasible", f"does not fit in the {format_size(budget_bytes)} memory budget{reached}: {reason}", peak
    return status, reason, peak


def available_memory_bytes(sysfs: SysFS) -> int | None:
    """``MemAvailable`` of ``/proc/meminfo``: what can be allocated without swapping."""
    try:
        text = sysfs.read_text("/proc/meminfo")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None
