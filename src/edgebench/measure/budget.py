"""What a trial run under a memory budget came to: running out of memory there means the trial is infeasible."""

from __future__ import annotations

from edgebench.records.bundle import MemoryWatch
from edgebench.units import format_size


def budget_outcome(
    status: str, reason: str, budget_bytes: int, watch: MemoryWatch | None, worker_peak_bytes: int | None
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
