"""Thermal throttling: a CPU clock held below its maximum while its cores are busy and the device is hot.

Samples are cut into windows (1 s by default; ``/proc/stat`` ticks at 10 ms make shorter windows noisy).  In each
window and for each cpufreq policy: the policy's cores are *busy* when their mean utilization is at least
``busy_pct``; the clock is *held down* when their mean frequency is below ``below`` x the policy's reference clock
(its ``scaling_max_freq`` when monitoring starts, so a user's own cap is not counted, or under the ``userspace``
governor the ``scaling_setspeed`` a frequency sweep chose); the device is *hot* when its
hottest temperature reading is at least ``hot_c``.  A window with all three is throttled; consecutive throttled
windows of a policy make one :class:`ThrottleEpisode`.

:func:`detect_throttling` is the pure function over recorded samples; :class:`ThrottleTracker` applies the same rule
to rows as they arrive (the monitor), in constant memory, and tells when an episode starts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from edgebench.records.throttle import PolicyLimit, ThrottleReference
from edgebench.sensors.samples import Samples

_CORE = re.compile(r"^cpu(\d+)_(active_ticks|idle_ticks|freq_khz)$")


@dataclass(frozen=True)
class LoadWindow:
    start_ns: int
    end_ns: int
    util_pct: dict[int, float]
    freq_khz: dict[int, float]
    temp_c: float | None


@dataclass(frozen=True)
class ThrottleEpisode:
    policy: str
    cores: tuple[int, ...]
    start_ns: int
    end_ns: int
    min_freq_khz: float
    max_khz: int
    max_temp_c: float

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


def throttled(
    window: LoadWindow, policy: PolicyLimit, hot_c: float, busy_pct: float = 50.0, below: float = 0.95
) -> bool:
    """Whether ``policy`` was busy, clocked down and hot in ``window``."""
    utils = [window.util_pct[c] for c in policy.cores if not math.isnan(window.util_pct.get(c, math.nan))]
    freqs = [window.freq_khz[c] for c in policy.cores if not math.isnan(window.freq_khz.get(c, math.nan))]
    if not utils or not freqs or window.temp_c is None:
        return False
    busy = sum(utils) / len(utils) >= busy_pct
    held = sum(freqs) / len(freqs) < below * policy.max_khz
    return busy and held and window.temp_c >= hot_c


class WindowAccumulator:
    """Cuts rows ``(t_ns, {column: value})`` into :class:`LoadWindow` s of ``window_s``, in constant memory."""

    def __init__(self, columns: Sequence[str], window_s: float = 1.0) -> None:
        self.window_ns = int(window_s * 1e9)
        self._active: dict[int, int] = {}
        self._idle: dict[int, int] = {}
        self._freq: dict[int, int] = {}
        self._temps: list[int] = []
        for i, column in enumerate(columns):
            match = _CORE.match(column)
            if match:
                target = {"active_ticks": self._active, "idle_ticks": self._idle, "freq_khz": self._freq}
                target[match.group(2)][int(match.group(1))] = i
            elif column.startswith("temp_") and column.endswith("_mc"):
                self._temps.append(i)
        self._start_ns: int | None = None
        self._start_ticks: dict[int, tuple[float, float]] = {}
        self._last_ticks: dict[int, tuple[float, float]] = {}
        self._freq_sum: dict[int, float] = {}
        self._freq_n: dict[int, int] = {}
        self._temp_max: float | None = None

    def _ticks(self, values: Sequence[float | None]) -> dict[int, tuple[float, float]]:
        out = {}
        for core, i in self._active.items():
            a, b = values[i], values[self._idle.get(core, i)]
            if a is not None and b is not None and not (math.isnan(a) or math.isnan(b)):
                out[core] = (a, b)
        return out

    def feed(self, t_ns: int, values: Sequence[float | None]) -> LoadWindow | None:
        """Take one row (values in column order, None or NaN where unread); returns a window when one closes."""
        ticks = self._ticks(values)
        closed = None
        if self._start_ns is None:
            self._begin(t_ns, ticks)
        else:
            self._last_ticks.update(ticks)
            if t_ns - self._start_ns >= self.window_ns:
                closed = self._close(t_ns)
                self._begin(t_ns, ticks)
        for core, i in self._freq.items():
            v = values[i]
            if v is not None and not math.isnan(v):
                self._freq_sum[core] = self._freq_sum.get(core, 0.0) + v
                self._freq_n[core] = self._freq_n.get(core, 0) + 1
        for i in self._temps:
            v = values[i]
            if v is not None and not math.isnan(v):
                self._temp_max = v / 1e3 if self._temp_max is None else max(self._temp_max, v / 1e3)
        return closed

    def _begin(self, t_ns: int, ticks: dict[int, tuple[float, float]]) -> None:
        self._start_ns = t_ns
        self._start_ticks = dict(ticks)
        self._last_ticks = dict(ticks)
        self._freq_sum, self._freq_n, self._temp_max = {}, {}, None

    def _close(self, t_ns: int) -> LoadWindow:
        util = {}
        for core, (a0, i0) in self._start_ticks.items():
            a1, i1 = self._last_ticks.get(core, (a0, i0))
            total = (a1 - a0) + (i1 - i0)
            util[core] = 100.0 * (a1 - a0) / total if total > 0 else math.nan
        freq = {c: self._freq_sum[c] / self._freq_n[c] for c in self._freq_n}
        assert self._start_ns is not None
        return LoadWindow(self._start_ns, t_ns, util, freq, self._temp_max)

    def finish(self, t_ns: int) -> LoadWindow | None:
        """Close the last, partial window (None when it holds a single row)."""
        if self._start_ns is None or t_ns <= self._start_ns:
            return None
        return self._close(t_ns)


@dataclass
class ThrottleTracker:
    """:func:`throttled` applied to windows as they close; open episodes are extended, closed ones kept."""

    policies: Sequence[PolicyLimit]
    hot_c: float
    busy_pct: float = 50.0
    below: float = 0.95
    on_start: Callable[[ThrottleEpisode], None] | None = None
    on_end: Callable[[ThrottleEpisode], None] | None = None
    episodes: list[ThrottleEpisode] = field(default_factory=list)
    _open: dict[str, ThrottleEpisode] = field(default_factory=dict)

    def feed(self, window: LoadWindow) -> None:
        for policy in self.policies:
            current = self._open.get(policy.name)
            if not throttled(window, policy, self.hot_c, self.busy_pct, self.below):
                if current is not None:
                    self._end(policy.name)
                continue
            freqs = [window.freq_khz[c] for c in policy.cores if c in window.freq_khz]
            freq = sum(freqs) / len(freqs)
            temp = window.temp_c or math.nan
            if current is None:
                episode = ThrottleEpisode(policy.name, policy.cores, window.start_ns, window.end_ns, freq,
                                          policy.max_khz, temp)  # fmt: skip
                self._open[policy.name] = episode
                if self.on_start:
                    self.on_start(episode)
            else:
                self._open[policy.name] = ThrottleEpisode(
                    policy.name, policy.cores, current.start_ns, window.end_ns, min(current.min_freq_khz, freq),
                    policy.max_khz, max(current.max_temp_c, temp),
                )  # fmt: skip

    def _end(self, name: str) -> None:
        episode = self._open.pop(name)
        self.episodes.append(episode)
        if self.on_end:
            self.on_end(episode)

    def finish(self) -> list[ThrottleEpisode]:
        for name in list(self._open):
            self._end(name)
        return sorted(self.episodes, key=lambda e: (e.start_ns, e.policy))


def load_windows(samples: Samples, window_s: float = 1.0) -> list[LoadWindow]:
    """Recorded samples cut into :class:`LoadWindow` s."""
    columns = list(samples.columns)
    data = np.column_stack([samples.columns[c] for c in columns]) if columns else np.zeros((len(samples), 0))
    acc = WindowAccumulator(columns, window_s)
    windows = [w for t, row in zip(samples.t_ns, data, strict=True) if (w := acc.feed(int(t), list(row)))]
    last = acc.finish(int(samples.t_ns[-1])) if len(samples) else None
    return windows + ([last] if last else [])


def untellable(columns: Iterable[str], reference: ThrottleReference) -> str | None:
    """Why throttling cannot be told from samples with these columns (None: it can): no CPU clock, no temperature,
    or no reference clock to compare with.  "No throttling" is then unknown, never a finding."""
    columns = list(columns)
    missing = [
        what
        for what, present in (
            ("CPU clock", any(_CORE.match(c) and c.endswith("_freq_khz") for c in columns)),
            ("temperature", any(c.startswith("temp_") and c.endswith("_mc") for c in columns)),
            ("cpufreq reference clock", bool(reference.policies)),
        )
        if not present
    ]
    return f"this device exposes no {' and no '.join(missing)}" if missing else None


def episodes_between(
    samples: Samples, t0_ns: int, t1_ns: int, reference: ThrottleReference
) -> list[ThrottleEpisode] | None:
    """Throttling episodes within ``[t0_ns, t1_ns]`` (a trial's measured steps); None when throttling cannot be told
    from these samples (:func:`untellable`)."""
    if untellable(samples.columns, reference):
        return None
    inside = samples.take((samples.t_ns >= t0_ns) & (samples.t_ns <= t1_ns))
    return detect_throttling(inside, reference.policies, reference.hot_c) if len(inside) >= 2 else []


def covered_ns(episodes: Iterable[ThrottleEpisode]) -> int:
    """Time inside any episode: overlapping episodes of two policies count once."""
    total, reach = 0, None
    for start, end in sorted((e.start_ns, e.end_ns) for e in episodes):
        total += max(0, end - (start if reach is None else max(start, reach)))
        reach = end if reach is None else max(reach, end)
    return total


def detect_throttling(
    samples: Samples,
    policies: Iterable[PolicyLimit],
    hot_c: float,
    window_s: float = 1.0,
    busy_pct: float = 50.0,
    below: float = 0.95,
) -> list[ThrottleEpisode]:
    """Every throttling episode in ``samples`` (see the module doc)."""
    tracker = ThrottleTracker(list(policies), hot_c, busy_pct, below)
    for window in load_windows(samples, window_s):
        tracker.feed(window)
    return tracker.finish()
