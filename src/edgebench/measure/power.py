"""Power over time and energy over a window, from whatever power sensors a device has.

Sensors describe their power quantities as :class:`~edgebench.sensors.base.PowerChannel` s (kept in the sampler's
meta): a cumulative energy counter (RAPL ``*_energy_uj``, NVML ``gpuN_energy_mj``), instantaneous power in mW
(Jetson ``rail_*_power_mw``, ``device_power_mw``), or both.  Energy over ``[t0, t1]`` is the counter's growth,
interpolated linearly to the window's edges, when there is a counter: nothing between two polls is missed.  Otherwise
it is the trapezoid integral of the power readings (the characterization paper's ``E = sum P_k dt``), with the power
at the edges interpolated.

Which channels make the device's figure (:func:`device_energy`): a channel that measures the whole device
(``total``) if there is one, preferring counters, then Jetson rails, then RAPL, then the battery; totals of one
sensor add up (a TX2's module ``VDD_IN`` and carrier ``VDD_MUX``).  Without a total, the non-overlapping ``part``
channels add up (RAPL packages and DRAM plus NVIDIA GPUs).  ``sub`` channels (a package's cores, a rail inside
``VDD_IN``) are only reported per rail.  With an idle window measured before the trial, DNNTune's
``E = T * (P_active - P_idle)`` becomes ``E_window - P_idle * T`` per channel.

Everything here is a pure function of :class:`~edgebench.sensors.samples.Samples`; the monitor, exports and traces
reuse :func:`power_series_w` and :func:`window_energy_j`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from edgebench.measure.utilization import delta
from edgebench.sensors.base import PowerChannel
from edgebench.sensors.samples import Samples

#: Preference among sensors for the device total when several measure one (after counters over power readings).
SOURCE_ORDER = ("jetson_power", "rapl", "power_supply", "nvml")


def power_channels(samples: Samples) -> list[PowerChannel]:
    """The power channels recorded with ``samples`` whose columns are present."""
    if samples.meta is None:
        return []
    out = []
    for spec in samples.meta.power_channels:
        channel = PowerChannel(**spec)
        if (channel.energy_column in samples.columns) or (channel.power_column in samples.columns):
            out.append(channel)
    return out


def _valid(t_ns: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = ~np.isnan(values)
    return t_ns[ok], values[ok]


def power_series_w(samples: Samples, channel: PowerChannel) -> tuple[np.ndarray, np.ndarray]:
    """``(t_ns, watts)`` of one channel over the whole recording.

    From a counter: the mean power over each interval between two readings, stamped at the interval's end (the
    first reading has none).  From a power column: each reading, in watts.
    """
    if channel.energy_column in samples.columns:
        t, e = _valid(samples.t_ns, samples.columns[channel.energy_column])
        if len(t) >= 2:
            dt_s = np.diff(t) / 1e9
            keep = dt_s > 0
            return t[1:][keep], (np.diff(e) * channel.energy_unit_j)[keep] / dt_s[keep]
    if channel.power_column in samples.columns:
        t, p = _valid(samples.t_ns, samples.columns[channel.power_column])
        return t, p / 1e3
    return np.zeros(0, dtype=np.int64), np.zeros(0)


def integrate_power_j(t_ns: np.ndarray, watts: np.ndarray, t0: int, t1: int) -> float:
    """Trapezoid integral of power readings over ``[t0, t1]``; NaN without a reading to go on.

    The power at each edge is interpolated between the readings around it (held flat past the first or last
    reading, so a window shorter than the polling period still has a figure).
    """
    t, p = _valid(np.asarray(t_ns), np.asarray(watts, dtype=np.float64))
    if len(t) == 0 or t1 <= t0:
        return math.nan
    inside = (t > t0) & (t < t1)
    times = np.concatenate(([t0], t[inside], [t1]))
    power = np.interp(times, t, p)
    return float(np.sum((power[1:] + power[:-1]) / 2 * np.diff(times)) / 1e9)


def window_energy_j(samples: Samples, channel: PowerChannel, t0: int, t1: int) -> float:
    """Energy the channel measured over ``[t0, t1]`` in joules (counter preferred); NaN where it cannot say."""
    if channel.energy_column in samples.columns:
        grown = delta(samples.t_ns, samples.columns[channel.energy_column], t0, t1)
        if not math.isnan(grown):
            return grown * channel.energy_unit_j
    if channel.power_column in samples.columns:
        return integrate_power_j(samples.t_ns, samples.columns[channel.power_column] / 1e3, t0, t1)
    return math.nan


def method(samples: Samples, channel: PowerChannel) -> str:
    """How :func:`window_energy_j` measures this channel, for labels."""
    return "energy counter" if channel.energy_column in samples.columns else "power samples"


@dataclass(frozen=True)
class RailFigures:
    """One channel over the trial window: energy before and after idle subtraction, mean and idle power."""

    gross_j: float
    active_j: float
    avg_power_w: float
    idle_power_w: float | None


@dataclass(frozen=True)
class EnergyFigures:
    """The device's energy over a window: what measured it, the figures, and every channel on its own."""

    source: str
    channels: tuple[str, ...]
    window_s: float
    gross_j: float
    #: ``gross_j - idle_power_w * window_s`` where an idle baseline was measured, else ``gross_j``
    active_j: float
    idle_power_w: float | None
    rails: dict[str, RailFigures]
    notes: tuple[str, ...] = ()

    @property
    def avg_power_w(self) -> float:
        return self.gross_j / self.window_s


def choose_channels(samples: Samples, usable: Sequence[PowerChannel]) -> list[PowerChannel]:
    """The channels whose sum is the device's figure (see the module doc); empty when there are none."""
    totals = [c for c in usable if c.scope == "total"]
    if totals:

        def rank(source: str) -> tuple[int, int]:
            counters = any(method(samples, c) == "energy counter" for c in totals if c.source == source)
            order = SOURCE_ORDER.index(source) if source in SOURCE_ORDER else len(SOURCE_ORDER)
            return (0 if counters else 1, order)

        best = min({c.source for c in totals}, key=rank)
        return [c for c in totals if c.source == best]
    return [c for c in usable if c.scope == "part"]


def describe(samples: Samples, chosen: Sequence[PowerChannel]) -> str:
    """``jetson_power: VDD_IN (power samples); nvml: gpu0 (energy counter)``."""
    parts = []
    for source in dict.fromkeys(c.source for c in chosen):
        mine = [c for c in chosen if c.source == source]
        methods = sorted({method(samples, c) for c in mine})
        parts.append(f"{source}: {' + '.join(c.name for c in mine)} ({', '.join(methods)})")
    return "; ".join(parts)


def device_power_w(samples: Samples) -> tuple[np.ndarray, np.ndarray, str] | None:
    """The device's power over time, ``(t_ns, watts, source)``, from the channels :func:`device_energy` would add up.

    Several channels (a TX2's ``VDD_IN`` and ``VDD_MUX``, RAPL packages and DRAM) are summed on the union of their
    reading times over the span they all cover; ``None`` where the device has no power sensor.
    """
    chosen = choose_channels(samples, power_channels(samples))
    series = [s for s in (power_series_w(samples, c) for c in chosen) if len(s[0])]
    if not series:
        return None
    lo, hi = max(t[0] for t, _ in series), min(t[-1] for t, _ in series)
    t = np.unique(np.concatenate([t for t, _ in series]))
    t = t[(t >= lo) & (t <= hi)]
    watts = np.sum([np.interp(t, st, sw) for st, sw in series], axis=0)
    return t, watts, describe(samples, chosen)


#: Relative difference below which a window's energy and its idle share are the same figure: the difference of two
#: equal powers integrated two ways is a rounding residue (a constant 2 W gave -6.9e-18 J), not energy.
_ROUNDING = 1e-12


def above_idle(gross_j: float, idle_w: float | None, window_s: float) -> float:
    """``E_window - P_idle * T`` (``E_window`` without a baseline); exactly 0 where the two agree to rounding."""
    if idle_w is None:
        return gross_j
    idle_j = idle_w * window_s
    return 0.0 if math.isclose(gross_j, idle_j, rel_tol=_ROUNDING, abs_tol=0.0) else gross_j - idle_j


def device_energy(samples: Samples, t0: int, t1: int, idle: tuple[int, int] | None = None) -> EnergyFigures | None:
    """Energy of the device over ``[t0, t1]`` from the best source present, idle power subtracted when ``idle``
    (a window before the trial, on the same clock) is given; ``None`` where the device has no power sensor."""
    window_s = (t1 - t0) / 1e9
    if window_s <= 0:
        return None
    gross = {c.name: window_energy_j(samples, c, t0, t1) for c in power_channels(samples)}
    usable = [c for c in power_channels(samples) if not math.isnan(gross[c.name])]
    chosen = choose_channels(samples, usable)
    if not chosen:
        return None
    notes: list[str] = []
    idle_w: dict[str, float | None] = {}
    for channel in usable:
        idle_w[channel.name] = None
        if idle is not None and idle[1] > idle[0]:
            idle_j = window_energy_j(samples, channel, idle[0], idle[1])
            idle_w[channel.name] = None if math.isnan(idle_j) else idle_j / ((idle[1] - idle[0]) / 1e9)
    rails = {}
    for channel in usable:
        p_idle = idle_w[channel.name]
        active = above_idle(gross[channel.name], p_idle, window_s)
        rails[channel.name] = RailFigures(gross[channel.name], active, gross[channel.name] / window_s, p_idle)
    total_gross = sum(gross[c.name] for c in chosen)
    chosen_idle = [idle_w[c.name] for c in chosen]
    if idle is not None and any(p is None for p in chosen_idle):
        notes.append("the idle window has no power reading: energy_j is not idle-subtracted")
    total_idle = sum(p for p in chosen_idle if p is not None) if all(p is not None for p in chosen_idle) else None
    active_total = above_idle(total_gross, total_idle, window_s)
    if total_idle is not None and active_total < -0.01 * total_gross:  # beyond rounding and 1% of noise
        notes.append("the trial drew less power than the idle baseline: the idle window was not representative")
    notes += charging_notes(samples, t0, t1)
    return EnergyFigures(
        source=describe(samples, chosen),
        channels=tuple(c.name for c in chosen),
        window_s=window_s,
        gross_j=total_gross,
        active_j=active_total,
        idle_power_w=total_idle,
        rails=rails,
        notes=tuple(notes),
    )


def charging_notes(samples: Samples, t0: int, t1: int) -> list[str]:
    """A warning when a charger or USB was connected during the window (battery readings are then charge current)."""
    online = samples.columns.get("external_power_online")
    if online is None:
        return []
    inside = (samples.t_ns >= t0) & (samples.t_ns <= t1)
    if not np.any(online[inside] == 1):
        return []
    return [
        "external power (USB or charger) was connected: the battery was charging, so its readings are not what the "
        "device used; device power = USB input + battery discharge where the USB input is readable. "
        "Unplug the device (run over Wi-Fi adb) for battery-only figures"
    ]
