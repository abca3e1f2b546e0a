"""CPU utilization over a time window from cumulative tick counters (the characterization paper, eq. 1-2).

``U_i = active time of core i / window``, read as the growth of core i's active ticks over the growth of its
active plus idle ticks, with both counters interpolated linearly to the window's edges so that a 200 ms window
sampled every 10 ms is not rounded to whole samples.  A core is *idle* in a sampling interval when its active
ticks did not grow while its idle ticks did; the idle-state ratio is the share of the window in such intervals.
"""

from __future__ import annotations

import math

import numpy as np

from edgebench.sensors.samples import Samples


def value_at(t_ns: np.ndarray, values: np.ndarray, t: int) -> float:
    """Linear interpolation of a cumulative counter at ``t``; NaN outside the sampled span or where unread."""
    ok = ~np.isnan(values)
    times, vals = t_ns[ok], values[ok]
    if len(times) < 2 or t < times[0] or t > times[-1]:
        return math.nan
    return float(np.interp(t, times, vals))


def delta(t_ns: np.ndarray, values: np.ndarray, t0: int, t1: int) -> float:
    return value_at(t_ns, values, t1) - value_at(t_ns, values, t0)


def core_ids(samples: Samples) -> list[int]:
    return [int(name[3:].split("_")[0]) for name in samples.matching("cpu", "_active_ticks")]


def per_core_utilization_pct(samples: Samples, t0: int, t1: int) -> list[float]:
    """Equation 1 for every core: active share of the window in percent (NaN where the core was offline)."""
    out = []
    for core in core_ids(samples):
        active = delta(samples.t_ns, samples.columns[f"cpu{core}_active_ticks"], t0, t1)
        idle = delta(samples.t_ns, samples.columns[f"cpu{core}_idle_ticks"], t0, t1)
        total = active + idle
        out.append(100.0 * active / total if total > 0 else math.nan)
    return out


def mean_utilization_pct(per_core: list[float]) -> float:
    """Equation 2: the mean over cores (offline cores excluded)."""
    online = [u for u in per_core if not math.isnan(u)]
    return sum(online) / len(online) if online else math.nan


def _overlaps(t_ns: np.ndarray, t0: int, t1: int) -> np.ndarray:
    """Length in ns of each sampling interval [t_k, t_k+1] that falls inside [t0, t1]."""
    starts, ends = t_ns[:-1], t_ns[1:]
    return np.clip(np.minimum(ends, t1) - np.maximum(starts, t0), 0, None).astype(np.float64)


def idle_ratio(samples: Samples, t0: int, t1: int) -> list[float]:
    """Per core: share of the window spent in sampling intervals where the core's active ticks did not grow.

    Ticks come at USER_HZ (100 Hz on most kernels), so at a 10 ms period an interval can see no tick of either
    kind; such intervals say nothing about the core and are left out of both the idle time and the total.
    """
    overlap = _overlaps(samples.t_ns, t0, t1)
    out = []
    for core in core_ids(samples):
        active = np.diff(samples.columns[f"cpu{core}_active_ticks"])
        idle = np.diff(samples.columns[f"cpu{core}_idle_ticks"])
        ticked = ~np.isnan(active) & ~np.isnan(idle) & (active + idle > 0)
        span = overlap[ticked].sum()
        out.append(float(overlap[ticked & (active == 0)].sum() / span) if span > 0 else math.nan)
    return out


def process_cpu_pct(samples: Samples, t0: int, t1: int, clk_tck: int) -> float:
    """CPU time of the watched process over the window, in percent of one core (above 100 with threads)."""
    if "proc_utime_ticks" not in samples.columns:
        return math.nan
    ticks = delta(samples.t_ns, samples.columns["proc_utime_ticks"], t0, t1) + delta(
        samples.t_ns, samples.columns["proc_stime_ticks"], t0, t1
    )
    return 100.0 * ticks / clk_tck / ((t1 - t0) / 1e9)


def window_values(samples: Samples, column: str, t0: int, t1: int) -> np.ndarray:
    """Readings of ``column`` taken inside the window (NaNs dropped)."""
    inside = (samples.t_ns >= t0) & (samples.t_ns <= t1)
    values = samples.columns[column][inside]
    return values[~np.isnan(values)]
