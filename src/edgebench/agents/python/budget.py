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

from edgebench.host.sysfs import SysFS
from edgebench.records.bundle import MemoryWatch
from edgebench.sensors.process import read_status_kib

POLL_S = 0.02


def apply_memory_budget(budget_bytes: int | None) -> None:
    """Cap this process's data segment (call before importing torch); a no-op without a budget."""
    if budget_bytes is None:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = budget_bytes if hard == resource.RLIM_INFINITY else min(budget_bytes, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def wait_within_budget(proc: subprocess.Popen[str], timeout_s: float, budget_bytes: int, sysfs: SysFS) -> MemoryWatch:
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
                return MemoryWatch(exceeded=True, peak_rss_bytes=peak)
        if time.monotonic() >= deadline:
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
        time.sleep(POLL_S)
    return MemoryWatch(exceeded=False, peak_rss_bytes=peak)


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
