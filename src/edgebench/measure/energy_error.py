"""How sure an energy figure is: a 95% interval from the source's resolution and refresh period, the window's length
and the idle baseline's spread, and the refusal of a window too short for the source to resolve.

Phone power sources are coarse: a fuel gauge refreshes every few seconds, a rail counter at its own period, so a
poll every 10 ms mostly reads the same value again.  Each of the chosen channels contributes, in quadrature:

* **refresh**: the source's true reading moves only every ``refresh_s`` (the median time between two changes of
  its value), so each window edge is placed within +-``refresh_s / 2`` of where the energy really was read: at the
  channel's mean power, ``P * refresh_s / 2`` per edge, two edges;
* **resolution**: one step of the value (a counter's unit, a power reading's smallest change seen) at each edge,
  held over ``refresh_s`` for power readings;
* **idle baseline**: ``T * ci95(P_idle)``, the 95% half-width of the idle window's mean power (Student t over the
  readings that changed in it), since ``P_idle * T`` is subtracted.

A window shorter than two refresh periods is refused: at most one fresh reading falls in it, so what it claims is
the interpolation, not a measurement.  A channel whose value never changed gives no refresh period (a constant
fixture, a stuck gauge): its interval is then its resolution only, and a note says the period is unknown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from edgebench.measure.power import EnergyFigures, PowerChannel, power_channels, power_series_w, window_energy_j
from edgebench.measure.stats import t975
from edgebench.sensors.samples import Samples


@dataclass(frozen=True)
class EnergyInterval:
    """The 95% half-width of ``energy_j`` and what it is made of; ``refused`` says why no figure may be claimed."""

    ci95_j: float | None
    refresh_s: float | None
    parts_j: dict[str, float]
    refused: str | None = None
    notes: tuple[str, ...] = ()


def _changes(t_ns: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = ~np.isnan(values)
    t, v = t_ns[ok], values[ok]
    if len(v) < 2:
        return t[:0], v[:0]
    moved = np.concatenate(([True], np.diff(v) != 0))
    return t[moved], v[moved]


def refresh_period_s(samples: Samples, channel: PowerChannel) -> float | None:
    """The median time between two changes of the channel's value; None when it changed fewer than twice."""
    column = channel.energy_column if channel.energy_column in samples.columns else channel.power_column
    if column not in samples.columns:
        return None
    t, _ = _changes(samples.t_ns, samples.columns[column])
    if len(t) < 3:  # the first row is no change; two changes make one interval
        return None
    return float(np.median(np.diff(t[1:]))) / 1e9


def resolution_j(samples: Samples, channel: PowerChannel, refresh_s: float | None) -> float:
    """One step of the channel's value, in joules: a counter's unit, or the smallest power change seen (or 1 mW)
    held over one refresh period."""
    if channel.energy_column in samples.columns:
        return channel.energy_unit_j
    assert channel.power_column is not None
    _, v = _changes(samples.t_ns, samples.columns[channel.power_column])
    steps = np.abs(np.diff(v))
    step_w = float(steps[steps > 0].min()) / 1e3 if np.any(steps > 0) else 1e-3
    return step_w * (refresh_s or 0.0)


def idle_spread_w(samples: Samples, channel: PowerChannel, idle: tuple[int, int]) -> float | None:
    """The 95% half-width of the idle window's mean power; None with fewer than two fresh readings.

    A counter's fresh readings are its mean powers between two changes of its value (a poll that read the same
    value again measured nothing); a power column's are its readings that changed."""
    if channel.energy_column in samples.columns:
        t, e = _changes(samples.t_ns, samples.columns[channel.energy_column])
        inside = (t >= idle[0]) & (t <= idle[1])
        t, e = t[inside], e[inside]
        fresh = np.diff(e) * channel.energy_unit_j / (np.diff(t) / 1e9) if len(t) >= 2 else e[:0]
    else:
        t, w = power_series_w(samples, channel)
        inside = (t > idle[0]) & (t <= idle[1]) & ~np.isnan(w)
        _, fresh = _changes(t[inside], w[inside])
    if len(fresh) < 2:
        return None
    return float(t975(len(fresh) - 1) * fresh.std(ddof=1) / math.sqrt(len(fresh)))


def energy_interval(
    samples: Samples, figures: EnergyFigures, t0: int, t1: int, idle: tuple[int, int] | None = None
) -> EnergyInterval:
    """The 95% interval of ``figures.active_j`` over ``[t0, t1]`` (see the module doc)."""
    chosen = [c for c in power_channels(samples) if c.name in figures.channels]
    window_s = (t1 - t0) / 1e9
    parts = {"refresh": 0.0, "resolution": 0.0, "idle_baseline": 0.0}
    notes: list[str] = []
    periods: list[float] = []
    for channel in chosen:
        refresh_s = refresh_period_s(samples, channel)
        if refresh_s is None:
            notes.append(f"{channel.name}: its value never changed twice, so its refresh period is unknown")
        else:
            periods.append(refresh_s)
        power_w = window_energy_j(samples, channel, t0, t1) / window_s if window_s > 0 else 0.0
        edge = abs(power_w) * (refresh_s or 0.0) / 2
        parts["refresh"] += 2 * edge**2
        parts["resolution"] += 2 * resolution_j(samples, channel, refresh_s) ** 2
        if idle is not None and figures.idle_power_w is not None:
            spread = idle_spread_w(samples, channel, idle)
            if spread is None:
                notes.append(
                    f"{channel.name}: the idle window has fewer than two fresh readings: its spread is unknown"
                )
            else:
                parts["idle_baseline"] += (spread * window_s) ** 2
    refresh = max(periods) if periods else None
    parts_j = {k: math.sqrt(v) for k, v in parts.items()}
    if refresh is not None and window_s < 2 * refresh:
        return EnergyInterval(
            ci95_j=None,
            refresh_s=refresh,
            parts_j=parts_j,
            refused=(
                f"the {window_s:.3g} s window is shorter than two refresh periods of the power source "
                f"({refresh:.3g} s each): run more steps"
            ),
            notes=tuple(notes),
        )
    return EnergyInterval(
        ci95_j=math.sqrt(sum(v**2 for v in parts_j.values())), refresh_s=refresh, parts_j=parts_j, notes=tuple(notes)
    )
