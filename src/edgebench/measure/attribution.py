"""Joining spans and samples by time: each sampling interval's quantity is split over the layers active in it.

This is the characterization paper's association step.  Spans of one thread nest, so every instant belongs to
at most one *innermost* span: :func:`exclusive_segments` cuts the spans into those exclusive stretches (a parent
owns the time between and around its children).  A quantity measured per sampling interval (CPU ticks, joules)
is taken as spread evenly over its interval and integrated over each stretch, so a layer active for 3 ms of a
10 ms interval gets 30% of that interval's quantity, and a layer spanning many intervals gets its share of each.
In practice this is linear interpolation of the cumulative quantity at the stretch's ends (:func:`split`),
the same interpolation the trial's utilization uses at its window's edges.

The resolution is the sampling period: a 0.2 ms layer inside a 10 ms interval gets that interval's average, and
only the many steps of a trial, each placing the layer at a different point of the sampling grid, resolve it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from edgebench.measure.power import device_power_w, power_channels, power_series_w
from edgebench.records.events import EventsLike, as_events, measured_steps
from edgebench.records.result import TraceSummary
from edgebench.records.spans import SpanTable
from edgebench.sensors.samples import Samples

N_KINDS = 4


@dataclass(frozen=True)
class Segments:
    """Exclusive stretches of time: no two overlap; ``key`` says whose time each one is."""

    start_ns: np.ndarray
    end_ns: np.ndarray
    key: np.ndarray

    def __len__(self) -> int:
        return len(self.key)

    @property
    def duration_ns(self) -> np.ndarray:
        return self.end_ns - self.start_ns


def exclusive_segments(start_ns: np.ndarray, end_ns: np.ndarray, key: np.ndarray) -> Segments:
    """Cut properly nested spans (one thread) into stretches owned by the innermost span active in each.

    A span that starts inside another but ends after it (which a correct tracer never produces) is clipped to
    its parent, so the result never double-counts time.
    """
    order = np.lexsort((-np.asarray(end_ns), np.asarray(start_ns)))
    out_start: list[int] = []
    out_end: list[int] = []
    out_key: list[int] = []

    def emit(a: int, b: int, k: int) -> None:
        if b > a:
            out_start.append(a)
            out_end.append(b)
            out_key.append(k)

    stack: list[tuple[int, int]] = []  # (end, key)
    cursor = 0
    for i in order:
        s, e, k = int(start_ns[i]), int(end_ns[i]), int(key[i])
        while stack and stack[-1][0] <= s:
            top_end, top_key = stack.pop()
            emit(cursor, top_end, top_key)
            cursor = top_end
        if stack:
            emit(cursor, s, stack[-1][1])
            e = min(e, stack[-1][0])
        cursor = s
        stack.append((e, k))
    while stack:
        top_end, top_key = stack.pop()
        emit(cursor, top_end, top_key)
        cursor = top_end
    return Segments(
        np.asarray(out_start, dtype=np.int64), np.asarray(out_end, dtype=np.int64), np.asarray(out_key, dtype=np.int64)
    )


def table_segments(spans: SpanTable) -> Segments:
    """Exclusive segments of a span table, thread by thread; key = ``label * 4 + kind``."""
    keys = spans.label.astype(np.int64) * N_KINDS + spans.kind
    parts = [
        exclusive_segments(spans.start_ns[spans.tid == t], spans.end_ns[spans.tid == t], keys[spans.tid == t])
        for t in np.unique(spans.tid)
    ]
    if not parts:
        return Segments(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    return Segments(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("start_ns", "end_ns", "key")))


def clip(segments: Segments, windows: list[tuple[int, int]]) -> Segments:
    """The parts of ``segments`` inside the (sorted, disjoint) windows, e.g. the measured steps."""
    starts, ends, keys = [], [], []
    for w0, w1 in windows:
        s = np.maximum(segments.start_ns, w0)
        e = np.minimum(segments.end_ns, w1)
        inside = e > s
        starts.append(s[inside])
        ends.append(e[inside])
        keys.append(segments.key[inside])
    if not starts:
        return Segments(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64))
    return Segments(np.concatenate(starts), np.concatenate(ends), np.concatenate(keys))


def time_by_key(segments: Segments, n_keys: int) -> np.ndarray:
    """Total exclusive ns per key."""
    return np.bincount(segments.key, weights=segments.duration_ns.astype(np.float64), minlength=n_keys)


def cumulative_at(t_ns: np.ndarray, cumulative: np.ndarray, at_ns: np.ndarray) -> np.ndarray:
    """Linear interpolation of a cumulative series at ``at_ns`` (NaN readings skipped; NaN outside its span)."""
    ok = ~np.isnan(cumulative)
    times, values = t_ns[ok], cumulative[ok]
    if len(times) < 2:
        return np.full(len(at_ns), math.nan)
    out = np.interp(at_ns, times, values)
    out[(at_ns < times[0]) | (at_ns > times[-1])] = math.nan
    return out


def split(segments: Segments, n_keys: int, t_ns: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """Each interval's growth of ``cumulative``, spread evenly over the interval, summed per key.

    Segments outside the sampled span contribute nothing (their part is unknown, not zero: compare the sum with
    :func:`window_total` to see what was covered).
    """
    grown = cumulative_at(t_ns, cumulative, segments.end_ns) - cumulative_at(t_ns, cumulative, segments.start_ns)
    grown = np.nan_to_num(grown, nan=0.0)
    return np.bincount(segments.key, weights=grown, minlength=n_keys)


def window_total(windows: list[tuple[int, int]], t_ns: np.ndarray, cumulative: np.ndarray) -> float:
    """Growth of ``cumulative`` over the windows."""
    a = np.array([w[0] for w in windows], dtype=np.int64)
    b = np.array([w[1] for w in windows], dtype=np.int64)
    grown = cumulative_at(t_ns, cumulative, b) - cumulative_at(t_ns, cumulative, a)
    return float(np.nansum(grown))


@dataclass(frozen=True)
class PowerSeries:
    """Power readings (W) at sample times; energy between readings is the trapezoid of the two."""

    t_ns: np.ndarray
    watts: np.ndarray
    source: str
    #: The channel's name (``VDD_SYS_CPU``); None for the device's total, the trial's ``energy`` basis.
    channel: str | None = None

    def cumulative_j(self) -> np.ndarray:
        """Energy since the first reading at each reading (J); NaN readings are skipped, not taken as 0 W."""
        ok = ~np.isnan(self.watts)
        out = np.full(len(self.watts), math.nan)
        t_s = self.t_ns[ok] / 1e9
        w = self.watts[ok]
        if len(w):
            out[ok] = np.concatenate([[0.0], np.cumsum(np.diff(t_s) * (w[1:] + w[:-1]) / 2)])
        return out


def power_channel_names(samples: Samples) -> list[str]:
    """Names of the power channels this trial's device recorded (rails, RAPL domains, GPUs, battery)."""
    return [c.name for c in power_channels(samples)]


def power_from_samples(samples: Samples, channel: str | None = None) -> PowerSeries | None:
    """The power series to attribute: the named channel, else the device's total; None without a power sensor.

    The total is :func:`edgebench.measure.power.device_power_w`, the same choice of channels as the trial's
    ``energy_j`` (a total rail where one exists, else the non-overlapping parts summed), so the layers' energies
    add up to the trial's.  ``channel`` may be a channel's name (``VDD_IN``, ``package-0``, ``gpu0``) or one of its
    columns; ``KeyError`` when the device has no such channel.
    """
    if channel is not None:
        for candidate in power_channels(samples):
            if channel in (candidate.name, candidate.power_column, candidate.energy_column):
                t_ns, watts = power_series_w(samples, candidate)
                return PowerSeries(t_ns, watts, f"{candidate.source}: {candidate.name}", candidate.name)
        raise KeyError(channel)
    device = device_power_w(samples)
    return PowerSeries(*device) if device is not None else None


def train_windows(events: EventsLike) -> list[tuple[int, int]]:
    """``(start_ns, end_ns)`` of each measured step: training steps, or an inference trial's forward passes."""
    return [(s.start_ns, s.end_ns) for s in measured_steps(as_events(events))]


def trace_summary(spans: SpanTable, events: EventsLike) -> TraceSummary:
    """Counts, and how much of the measured steps' time the spans cover."""
    windows = train_windows(events)
    covered = clip(table_segments(spans), windows).duration_ns.sum()
    total = sum(b - a for a, b in windows)
    return TraceSummary(
        granularity=spans.granularity,  # type: ignore[arg-type]
        spans=len(spans),
        labels=len(spans.names),
        covered_pct=100.0 * float(covered) / total if total else 0.0,
    )
