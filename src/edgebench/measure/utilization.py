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


#: The least share of a window that a sampled process counter's readings must span for a rate over it.
MIN_READ_SHARE = 0.5


def read_span(t_ns: np.ndarray, values: np.ndarray, t0: int, t1: int) -> tuple[int, int] | None:
    """The part of ``[t0, t1]`` a cumulative counter's readings span; None where that is under
    :data:`MIN_READ_SHARE` of the window.

    Why: a watched process's counters are read every 50-100 ms and end when it exits, and a ``--command`` workload
    exits right after its last step line, so its last reading comes up to a period before the window's end: a
    figure over the whole window was missing at random.  A rate (a CPU share, a wait share) over most of the window
    estimates the window's."""
    times = t_ns[~np.isnan(values)]
    if len(times) < 2:
        return None
    start, end = max(t0, int(times[0])), min(t1, int(times[-1]))
    return (start, end) if end > start and end - start >= MIN_READ_SHARE * (t1 - t0) else None


def process_cpu_s(samples: Samples, t0: int, t1: int, clk_tck: int) -> tuple[float, float]:
    """CPU time (s) of the watched process and the window (s) it is over: ``[t0, t1]``, or the part of it its
    sampled tick counters span (:func:`read_span`); NaN time where unread."""
    columns = samples.columns
    span = read_span(samples.t_ns, columns["proc_utime_ticks"], t0, t1) if "proc_utime_ticks" in columns else None
    if span is None:
        return math.nan, (t1 - t0) / 1e9
    a, b = span
    return own_ticks(samples, a, b) / clk_tck, (b - a) / 1e9


#: The watched process's CPU tick counters: its own, and its waited-for children's (a script's ``date``, a
#: ``make``'s compilers), which a workload that forks would otherwise leave to "other processes".
OWN_TICKS = ("proc_utime_ticks", "proc_stime_ticks", "proc_children_ticks")


def own_ticks(samples: Samples, t0: int, t1: int) -> float:
    """The watched process's CPU ticks over ``[t0, t1]`` (:data:`OWN_TICKS` that were sampled); NaN if unread."""
    return sum(delta(samples.t_ns, samples.columns[c], t0, t1) for c in OWN_TICKS if c in samples.columns)


def process_cpu_pct(samples: Samples, t0: int, t1: int, clk_tck: int) -> float:
    """The same in percent of one core over its window, unchecked (see :func:`checked_cpu_share_pct`)."""
    cpu_s, window_s = process_cpu_s(samples, t0, t1, clk_tck)
    return 100.0 * cpu_s / window_s


#: The kernel's CPU-time accounting resolution assumed per core: one tick of USER_HZ (100 Hz; kernels tick at
#: 100-1000 Hz, so this is the coarsest case).  A thread running on another core has its time brought up to date
#: only at that core's next tick or context switch, so each end of a window can be off by a tick per core.
ACCOUNTING_TICK_S = 0.01
#: A process CPU share is reported only when that error bound is at most this many percent of one core.
MAX_CPU_SHARE_ERROR_PCT = 10.0


def cpu_share_error_pct(window_s: float, cores: int, tick_s: float = ACCOUNTING_TICK_S) -> float:
    """Bound on the error of a CPU share over ``window_s`` (percent of one core): a tick per core at each end."""
    return math.inf if window_s <= 0 else 100.0 * 2 * max(cores, 1) * tick_s / window_s


def min_cpu_share_window_s(cores: int, tick_s: float = ACCOUNTING_TICK_S) -> float:
    """The shortest window whose CPU share is within :data:`MAX_CPU_SHARE_ERROR_PCT` of a core."""
    return 100.0 * 2 * max(cores, 1) * tick_s / MAX_CPU_SHARE_ERROR_PCT


#: What the worker's CPU share over the measured steps and over the inference passes are called in notes.
TRAIN_CPU = "worker CPU of the measured steps"
INFER_CPU = "worker CPU of the inference passes"


def withheld(notes: list[str] | None, what: str) -> bool:
    """Whether ``notes`` say the figure ``what`` (:data:`TRAIN_CPU`, :data:`INFER_CPU`) was withheld."""
    return any(n.startswith(f"{what} withheld") for n in notes or [])


def checked_cpu_share_pct(
    cpu_s: float, window_s: float, cores: int, what: str, tick_s: float = ACCOUNTING_TICK_S
) -> tuple[float | None, str | None]:
    """``(share, note)``: a process's CPU time over a window in percent of one core, or None and why.

    Withheld, never shown, where the window is too short for the kernel's accounting to resolve it (a 5 ms
    window on 2 cores can read 599%) or where the figure is more than ``cores`` can give.
    """
    if window_s <= 0 or math.isnan(cpu_s):
        return None, None
    share = 100.0 * cpu_s / window_s
    shortest = min_cpu_share_window_s(cores, tick_s)
    if window_s < shortest:
        return None, (
            f"{what} withheld: its window ({window_s * 1e3:.1f} ms) is shorter than {shortest:.2f} s, the least over "
            f"which CPU-time accounting ({tick_s * 1e3:g} ms ticks on {cores} core{'s' if cores != 1 else ''}) is "
            f"within {MAX_CPU_SHARE_ERROR_PCT:g}% of a core; run more steps"
        )
    limit = 100.0 * cores + cpu_share_error_pct(window_s, cores, tick_s)
    if share > limit:
        return None, f"{what} withheld: it read {share:.0f}%, more than {cores} core{'s' if cores != 1 else ''} allow"
    return min(share, 100.0 * cores), None


def window_values(samples: Samples, column: str, t0: int, t1: int) -> np.ndarray:
    """Readings of ``column`` taken inside the window (NaNs dropped)."""
    inside = (samples.t_ns >= t0) & (samples.t_ns <= t1)
    values = samples.columns[column][inside]
    return values[~np.isnan(values)]
