"""Was the device quiet and were the steps steady?  What pyperf checks before trusting a benchmark, per trial.

Three facts every result carries (:class:`~edgebench.records.result.Hygiene`):

- **other load**: the share of the trial's cores' time that *other* processes used over the measured window:
  the cores' active ticks (``/proc/stat``) less the worker's own ticks (``/proc/<pid>/stat``, the same clock),
  over the cores' total ticks.  A trial sharing its cores with a busy process runs slower for a reason that is
  not its own, and its per-core utilization counts the other process's load as the trial's.
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
from typing import Any

import numpy as np

from edgebench.measure.utilization import delta, min_cpu_share_window_s, window_values
from edgebench.records.result import Hygiene, ZoneTrip
from edgebench.sensors.android_thermal import THROTTLING_STATUS, status_name
from edgebench.sensors.samples import Samples

#: Other processes using more than this share of the trial's cores make the device "busy" (generous: a sampler,
#: a shell and the kernel's own threads stay far below it).
BUSY_OTHER_PCT = 20.0
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
    if (t1 - t0) / 1e9 < min_cpu_share_window_s(len(cores), tick_s=1.0 / clk_tck):
        return None
    t = samples.t_ns
    active = sum(delta(t, columns[f"cpu{c}_active_ticks"], t0, t1) for c in cores)
    idle = sum(delta(t, columns[f"cpu{c}_idle_ticks"], t0, t1) for c in cores)
    if own_cpu_s is not None:
        own = own_cpu_s * clk_tck
    else:
        own = delta(t, columns["proc_utime_ticks"], t0, t1) + delta(t, columns["proc_stime_ticks"], t0, t1)
    total = active + idle
    if math.isnan(total + own) or total <= 0:
        return None
    return float(min(max(100.0 * (active - own) / total, 0.0), 100.0))


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
) -> Hygiene:
    """The three checks over the measured window; each None where the trial's records cannot tell."""
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
    result = Hygiene(
        other_cpu_pct=other,
        step_cv=cv,
        step_modes_ms=list(two) if two else None,
        clock_moved=moved,
        clock_range_khz=list(clock) if clock else None,
        thermal_status_start=thermal_status[0],
        thermal_status_end=thermal_status[1],
        zone_trip_start=ZoneTrip(**zone_trips[0]) if zone_trips[0] else None,
        zone_trip_end=ZoneTrip(**zone_trips[1]) if zone_trips[1] else None,
    )
    return result.model_copy(update={"warning": warning_line(result, cores)})


def warning_line(h: Hygiene, cores: Sequence[int]) -> str | None:
    """One line naming each check the trial failed, with its number; None for a trial that passed them all."""
    parts = []
    if h.other_cpu_pct is not None and h.other_cpu_pct > BUSY_OTHER_PCT:
        where = "its cores" if cores else "the device"
        parts.append(f"device busy: other processes used {h.other_cpu_pct:.0f}% of {where}")
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
