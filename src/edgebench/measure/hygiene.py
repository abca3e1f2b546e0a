"""Was the device quiet and were the steps steady?  What pyperf checks before trusting a benchmark, per trial.

Three facts every result carries (:class:`~edgebench.records.result.Hygiene`):

- **other load**: the share of the trial's cores' time that *other* processes used over the measured window:
  the cores' active ticks (``/proc/stat``) less the worker's own ticks (``/proc/<pid>/stat``, the same clock),
  over the cores' total ticks.  A trial sharing its cores with a busy process runs slower for a reason that is
  not its own, and its per-core utilization counts the other process's load as the trial's.
- **contention**: how long the worker's threads waited on a run queue, as a share of the time they were runnable,
  and how often per second one was preempted (the kernel's per-thread scheduler counters, read by the worker at its
  measured window's edges, or sampled from ``/proc/<pid>/task/*/schedstat`` for a ``--command`` workload).  These
  count in nanoseconds, so they see a busy device over a 0.28 s window that the ticks cannot resolve; where neither
  can tell (too short a window and no scheduler counters), that is itself a failed check: nothing says the device
  was quiet.
- **dispersion**: the step times' coefficient of variation, and whether they fall into two modes (a mean that
  hides bimodal steps: 13.4 ms mean over steps of 0.22 ms and 33 ms describes neither).
- **clock**: whether the trial's cores changed frequency during the window (a governor scaling, or throttling).
- **thermal status** (phones): the status Android reported before and after the trial; moderate (2) or worse means
  the platform throttles, whatever the clocks sampled show.  A board has no such service: its thermal zones'
  temperatures against their first passive trip point, before and after, say the same (at or above: throttling).

A trial that fails any check gets one warning line (:func:`warning_line`), which every table showing it prints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from edgebench.measure.utilization import delta, min_cpu_share_window_s, own_ticks, read_span, window_values
from edgebench.records.events import Scheduling
from edgebench.records.result import Hygiene, ZoneTrip
from edgebench.sensors.android_thermal import THROTTLING_STATUS, status_name
from edgebench.sensors.samples import Samples

#: Other processes using more than this share of the trial's cores make the device "busy" (generous: a sampler,
#: a shell and the kernel's own threads stay far below it).
BUSY_OTHER_PCT = 20.0
#: The worker's threads waiting for a CPU more than this share of the time they were runnable (beyond what its own
#: threads beyond its cores explain) make the device "busy": on a quiet device a woken thread waits microseconds
#: (a few percent of a short step's time at most); beside one other busy thread per core the scheduler's fair share
#: leaves it waiting about half the time.
BUSY_WAIT_PCT = 20.0
#: A wait over :data:`BUSY_WAIT_PCT` makes the device busy only when it adds up to at least this long (ms, summed over
#: the threads): one wake-up on a core that runs something else (a kernel thread, the sampler) waits up to a
#: scheduler slice, about 3 ms, which is 20-40% of a 7-20 ms window on a quiet device.  Under it the counters cannot
#: tell a neighbour from that latency.
MIN_BUSY_WAIT_MS = 10.0
#: Where the run-queue wait is unknown, this many involuntary switches per second per thread make it "busy" (a
#: preempting neighbour on every core switches the worker out every few milliseconds).
BUSY_SWITCHES_PER_S = 100.0
#: Steps whose coefficient of variation is above this are "unstable" (pyperf warns at 10%).
UNSTABLE_CV = 0.10
#: Two modes: the widest gap between consecutive sorted step times is at least this ratio, each side holding at
#: least :data:`MODE_MIN_SHARE` of the steps.
MODE_GAP_RATIO = 2.0
MODE_MIN_SHARE = 0.1
#: The clock "moved" when the trial's cores' sampled frequency spread more than this share of its highest value.
CLOCK_MOVED_SHARE = 0.05


def other_cpu_pct(
    samples: Samples, cores: Sequence[int], t0: int, t1: int, clk_tck: int, own_cpu_s: float | None = None
) -> float | None:
    """Share (percent) of ``cores``' time over ``[t0, t1]`` used by processes other than the sampled worker; None
    where the window is too short for the tick counters or a counter is missing.

    ``own_cpu_s``: the worker's own CPU time over the window, from its rusage.  Preferred to the sampled process
    counters, which the sampler reads at a slower period and loses when the worker exits: the last reading before
    the window's end could come before it (the figure was then missing at random)."""
    columns = samples.columns
    if not cores or (own_cpu_s is None and "proc_utime_ticks" not in columns):
        return None
    if any(f"cpu{c}_active_ticks" not in columns for c in cores):
        return None
    if own_cpu_s is None:  # the process's sampled counters: over the part of the window they span
        span = read_span(samples.t_ns, columns["proc_utime_ticks"], t0, t1)
        if span is None:
            return None
        t0, t1 = span
    if (t1 - t0) / 1e9 < min_cpu_share_window_s(len(cores), tick_s=1.0 / clk_tck):
        return None
    t = samples.t_ns
    active = sum(delta(t, columns[f"cpu{c}_active_ticks"], t0, t1) for c in cores)
    idle = sum(delta(t, columns[f"cpu{c}_idle_ticks"], t0, t1) for c in cores)
    own = own_cpu_s * clk_tck if own_cpu_s is not None else own_ticks(samples, t0, t1)
    total = active + idle
    if math.isnan(total + own) or total <= 0:
        return None
    return float(min(max(100.0 * (active - own) / total, 0.0), 100.0))


@dataclass(frozen=True)
class Contention:
    """The scheduler's counters of the worker's threads over the measured window (see the module doc)."""

    run_queue_wait_pct: float | None
    involuntary_switches_per_s: float | None
    threads: int | None = None
    run_queue_wait_ms: float | None = None


def contention(sched: Scheduling | None, samples: Samples | None, t0: int, t1: int) -> Contention:
    """From the worker's own readings at the window's edges, else from the sampled schedstat sums (a ``--command``
    workload: ``proc_on_cpu_ns`` and ``proc_run_queue_wait_ns`` over ``[t0, t1]``); None figures where neither
    was read or the threads were never runnable."""
    if sched is not None:
        runnable = sched.on_cpu_s + sched.run_queue_wait_s
        wait = 100.0 * sched.run_queue_wait_s / runnable if runnable > 0 else None
        switches = None
        if sched.involuntary_switches is not None and sched.window_s > 0:
            switches = sched.involuntary_switches / sched.window_s
        return Contention(wait, switches, sched.threads, 1e3 * sched.run_queue_wait_s)
    if samples is None or "proc_run_queue_wait_ns" not in samples.columns:
        return Contention(None, None)
    span = read_span(samples.t_ns, samples.columns["proc_run_queue_wait_ns"], t0, t1)
    if span is None:
        return Contention(None, None)
    t0, t1 = span
    wait_ns = delta(samples.t_ns, samples.columns["proc_run_queue_wait_ns"], t0, t1)
    run_ns = delta(samples.t_ns, samples.columns["proc_on_cpu_ns"], t0, t1)
    runnable = wait_ns + run_ns
    if math.isnan(runnable) or runnable <= 0 or wait_ns < 0:
        return Contention(None, None)
    return Contention(100.0 * wait_ns / runnable, None, run_queue_wait_ms=wait_ns / 1e6)


def own_wait_pct(threads: int | None, cores: Sequence[int]) -> float:
    """The run-queue wait the worker's own threads explain: ``threads`` busy threads on fewer ``cores`` wait
    ``1 - cores / threads`` of their runnable time for each other, whatever else runs."""
    if not threads or not cores or threads <= len(cores):
        return 0.0
    return 100.0 * (1.0 - len(cores) / threads)


def modes(step_ms: np.ndarray) -> tuple[float, float] | None:
    """The medians of two modes of the step times, or None where they form one."""
    x = np.sort(step_ms[step_ms > 0])
    n = len(x)
    if n < 4:
        return None
    ratios = x[1:] / x[:-1]
    lo = max(math.ceil(MODE_MIN_SHARE * n), 2)
    candidates = range(lo - 1, n - lo)  # a split after index i leaves >= lo steps on each side
    if not len(candidates):
        return None
    i = max(candidates, key=lambda k: ratios[k])
    if ratios[i] < MODE_GAP_RATIO:
        return None
    return float(np.median(x[: i + 1])), float(np.median(x[i + 1 :]))


def clock_range_khz(samples: Samples, cores: Sequence[int], t0: int, t1: int) -> tuple[float, float] | None:
    values = [
        window_values(samples, f"cpu{c}_freq_khz", t0, t1) for c in cores if f"cpu{c}_freq_khz" in samples.columns
    ]
    readings = np.concatenate(values) if values else np.zeros(0)
    return (float(readings.min()), float(readings.max())) if len(readings) else None


def hygiene(
    step_ms: np.ndarray,
    samples: Samples | None,
    cores: Sequence[int],
    t0: int,
    t1: int,
    *,
    mean_only: bool = False,
    own_cpu_s: float | None = None,
    thermal_status: tuple[int | None, int | None] = (None, None),
    zone_trips: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None),
    sched: Scheduling | None = None,
    threads: int | None = None,
) -> Hygiene:
    """The checks over the measured window; each None where the trial's records cannot tell.  ``sched``: the
    worker's scheduler counters over the window; ``threads``: the trial's thread count (its own threads beyond its
    cores wait for each other, which is not another process's doing)."""
    cv = None
    two = None
    if not mean_only and len(step_ms) > 1 and step_ms.mean() > 0:
        cv = float(step_ms.std(ddof=1) / step_ms.mean())
        two = modes(step_ms)
    other = clock = None
    if samples is not None and len(samples) >= 2 and samples.meta is not None:
        other = other_cpu_pct(samples, cores, t0, t1, samples.meta.clk_tck, own_cpu_s)
        clock = clock_range_khz(samples, cores, t0, t1)
    moved = None if clock is None else (clock[1] - clock[0]) > CLOCK_MOVED_SHARE * clock[1]
    waited = contention(sched, samples, t0, t1)
    unknown = None
    if other is None and waited.run_queue_wait_pct is None and waited.involuntary_switches_per_s is None:
        unknown = quiet_unknown(samples, cores, t0, t1)
    elif other is None and waited_too_briefly(waited, cores, threads):
        unknown = (
            f"window too short: its threads waited {waited.run_queue_wait_ms:.1f} ms for a CPU "
            f"({waited.run_queue_wait_pct:.0f}% of the time they were runnable), under the {MIN_BUSY_WAIT_MS:g} ms "
            "that tells a busy neighbour from one wake-up's latency, over a window too short for /proc/stat's ticks: "
            "nothing tells whether the device was quiet (run more steps, or --min-time)"
        )
    result = Hygiene(
        other_cpu_pct=other,
        run_queue_wait_pct=waited.run_queue_wait_pct,
        run_queue_wait_ms=waited.run_queue_wait_ms,
        involuntary_switches_per_s=waited.involuntary_switches_per_s,
        quiet_unknown=unknown,
        step_cv=cv,
        step_modes_ms=list(two) if two else None,
        clock_moved=moved,
        clock_range_khz=list(clock) if clock else None,
        thermal_status_start=thermal_status[0],
        thermal_status_end=thermal_status[1],
        zone_trip_start=ZoneTrip(**zone_trips[0]) if zone_trips[0] else None,
        zone_trip_end=ZoneTrip(**zone_trips[1]) if zone_trips[1] else None,
    )
    return result.model_copy(update={"warning": warning_line(result, cores, threads)})


def quiet_unknown(samples: Samples | None, cores: Sequence[int], t0: int, t1: int) -> str:
    """Why neither the ticks nor the scheduler's counters can say whether the device was quiet."""
    window_s = (t1 - t0) / 1e9
    if samples is None or len(samples) < 2 or samples.meta is None:
        return "no sampler ran and no scheduler counters were read: nothing tells whether the device was quiet"
    shortest = min_cpu_share_window_s(len(cores) or 1, tick_s=1.0 / samples.meta.clk_tck)
    if window_s < shortest:
        return (
            f"window too short: {window_s:.2f} s of measured steps, under the {shortest:.2f} s /proc/stat's ticks "
            "resolve, and no scheduler counters were read: nothing tells whether the device was quiet (run more "
            "steps, or --min-time)"
        )
    return "no tick counters of its cores and no scheduler counters were read: nothing tells whether it was quiet"


def waited_over_share(wait_pct: float | None, cores: Sequence[int], threads: int | None) -> bool:
    """Whether the worker's threads waited for a CPU more than :data:`BUSY_WAIT_PCT` beyond what its own threads
    explain (the share rule of both checks below)."""
    return wait_pct is not None and wait_pct > own_wait_pct(threads, cores) + BUSY_WAIT_PCT


def waited_too_briefly(waited: Contention, cores: Sequence[int], threads: int | None) -> bool:
    """Whether the wait is a large share of the runnable time but too short in all to be anyone's doing."""
    brief = waited.run_queue_wait_ms is not None and waited.run_queue_wait_ms < MIN_BUSY_WAIT_MS
    return brief and waited_over_share(waited.run_queue_wait_pct, cores, threads)


def busy_by_waiting(h: Hygiene, cores: Sequence[int], threads: int | None) -> bool:
    """Whether the scheduler's counters say other work kept the worker from its cores (a record without the wait's
    length, stored before it was kept, is judged by its share alone)."""
    if h.run_queue_wait_pct is not None:
        long_enough = h.run_queue_wait_ms is None or h.run_queue_wait_ms >= MIN_BUSY_WAIT_MS
        return long_enough and waited_over_share(h.run_queue_wait_pct, cores, threads)
    if h.involuntary_switches_per_s is not None and own_wait_pct(threads, cores) == 0.0:
        return h.involuntary_switches_per_s > BUSY_SWITCHES_PER_S * max(threads or 1, 1)
    return False


def warning_line(h: Hygiene, cores: Sequence[int], threads: int | None = None) -> str | None:
    """One line naming each check the trial failed, with its number; None for a trial that passed them all."""
    parts = []
    busy = []
    if h.other_cpu_pct is not None and h.other_cpu_pct > BUSY_OTHER_PCT:
        where = "its cores" if cores else "the device"
        busy.append(f"other processes used {h.other_cpu_pct:.0f}% of {where}")
    if busy_by_waiting(h, cores, threads):
        if h.run_queue_wait_pct is not None:
            said = f"its threads waited for a CPU {h.run_queue_wait_pct:.0f}% of the time they were runnable"
            if h.involuntary_switches_per_s is not None:
                said += f" ({h.involuntary_switches_per_s:.0f} involuntary switches/s)"
        else:
            said = f"its threads were preempted {h.involuntary_switches_per_s:.0f} times/s"
        busy.append(said)
    if busy:
        parts.append("device busy: " + ", ".join(busy))
    if h.quiet_unknown:
        parts.append(h.quiet_unknown)
    if h.step_modes_ms:
        low, high = h.step_modes_ms
        parts.append(f"steps in two modes (near {low:.3g} and {high:.3g} ms): the mean describes neither")
    elif h.step_cv is not None and h.step_cv > UNSTABLE_CV:
        parts.append(f"unstable steps (cv {h.step_cv:.0%})")
    if h.clock_moved and h.clock_range_khz:
        low, high = h.clock_range_khz
        parts.append(f"clock moved {low / 1e3:.0f}-{high / 1e3:.0f} MHz")
    reported = [
        (when, s) for when, s in (("start", h.thermal_status_start), ("end", h.thermal_status_end)) if s is not None
    ]
    hot = [(when, s) for when, s in reported if s >= THROTTLING_STATUS]
    if hot:
        when, status = max(hot, key=lambda r: r[1])
        parts.append(
            f"the phone reported thermal status {status} ({status_name(status)}) at the trial's {when}: it throttles"
        )
    trips = [(when, z) for when, z in (("start", h.zone_trip_start), ("end", h.zone_trip_end)) if z is not None]
    over = [(when, z) for when, z in trips if z.temp_c >= z.passive_trip_c]
    if over:
        when, z = max(over, key=lambda r: r[1].temp_c - r[1].passive_trip_c)
        parts.append(
            f"thermal zone {z.zone} was at {z.temp_c:.1f} °C at the trial's {when}, at or above its first passive trip "
            f"point ({z.passive_trip_c:.1f} °C): the kernel throttles"
        )
    return "; ".join(parts) or None
