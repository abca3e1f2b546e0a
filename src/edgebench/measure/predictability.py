"""How predictable training is: step-time spread, and whether utilization repeats with the step period.

The characterization paper (Observation 2) found per-core utilization periodic with one period per training
step, so a few profiled steps describe the rest.  Two figures make that checkable per trial:

- Steps needed for a stable mean: the smallest ``n`` with ``t(0.975, n-1) * cv / sqrt(n) <= e``, i.e. the 95%
  interval of the mean step time within +/-e of the mean, at the coefficient of variation measured.
- Periodicity at the step period: per core, the Pearson correlation between the utilization series (one value
  per sampling interval, from the core's tick counters) and itself shifted by one mean step period.  The lag is
  in samples and may be fractional (the shifted series is interpolated linearly).  1 means the same pattern every
  step, 0 no relation, negative an alternating one.  It needs a step of at least two sampling intervals (a shorter
  step cannot be resolved) and three periods of data; otherwise it is None and the note says why.  A core whose
  utilization does not vary at all (e.g. 100% throughout) has no pattern to correlate: None, said so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from edgebench.measure.stats import t975
from edgebench.records.result import Predictability, SeriesPeriodicity
from edgebench.sensors.samples import Samples

MIN_LAG_SAMPLES = 2.0
MIN_PERIODS = 3.0
MIN_PAIRS = 8


def steps_for_ci(cv: float, rel_half_width: float, max_steps: int = 1_000_000) -> int | None:
    """Smallest n >= 2 whose 95% t-interval half-width of the mean is within ``rel_half_width`` of it."""
    if not math.isfinite(cv) or cv < 0:
        return None
    if cv == 0:
        return 2
    n = max(2, math.ceil((1.96 * cv / rel_half_width) ** 2))  # the normal approximation, then walk up
    while n <= max_steps:
        if t975(n - 1) * cv / math.sqrt(n) <= rel_half_width:
            # the t quantile shrinks with n, so the normal estimate can be too high by a few steps: walk down
            while n > 2 and t975(n - 2) * cv / math.sqrt(n - 1) <= rel_half_width:
                n -= 1
            return n
        n += 1
    return None


def autocorrelation_at(x: np.ndarray, lag: float) -> float | None:
    """Pearson correlation of ``x[i]`` and ``x[i + lag]`` (``lag`` in samples, fractional allowed).

    Pairs with a missing value on either side are left out; None when fewer than a handful of pairs remain or
    either side has no variance.
    """
    x = np.asarray(x, dtype=np.float64)
    whole = math.floor(lag)
    frac = lag - whole
    n = len(x) - whole - (1 if frac > 0 else 0)
    if n < MIN_PAIRS or lag < 0:
        return None
    a = x[:n]
    b = x[whole : whole + n] if frac == 0 else (1 - frac) * x[whole : whole + n] + frac * x[whole + 1 : whole + 1 + n]
    ok = ~np.isnan(a) & ~np.isnan(b)
    if ok.sum() < MIN_PAIRS:
        return None
    a, b = a[ok], b[ok]
    if _flat(a) or _flat(b):
        return None
    return float(np.corrcoef(a, b)[0, 1])


def _flat(x: np.ndarray) -> bool:
    """No variation beyond floating-point rounding: a rail's power computed from still readings (a copied tree, a
    sensor slower than the steps) differs in its last bits only, and correlating that noise gave 1.0."""
    return bool(x.std() <= 1e-9 * max(1.0, float(np.abs(x).max())))


def interval_utilization(samples: Samples, core: int, t0: int, t1: int) -> np.ndarray:
    """Utilization (0-1) of ``core`` in each sampling interval inside [t0, t1]; NaN where no tick was counted."""
    inside = (samples.t_ns >= t0) & (samples.t_ns <= t1)
    active = np.diff(samples.columns[f"cpu{core}_active_ticks"][inside])
    idle = np.diff(samples.columns[f"cpu{core}_idle_ticks"][inside])
    total = active + idle
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, active / total, np.nan)


def step_lag(samples: Samples, t0: int, t1: int, period_ns: float) -> tuple[float | None, str | None]:
    """One step period in sampling intervals, or None and why the samples cannot resolve it."""
    inside = samples.t_ns[(samples.t_ns >= t0) & (samples.t_ns <= t1)]
    if len(inside) < 3:
        return None, "too few samples in the measured phase"
    interval_ns = float(np.median(np.diff(inside)))
    lag = period_ns / interval_ns
    if lag < MIN_LAG_SAMPLES:
        return None, (
            f"a step ({period_ns / 1e6:.1f} ms) is shorter than two sampling intervals "
            f"({interval_ns / 1e6:.1f} ms): sample faster (--interval) or take bigger steps"
        )
    if len(inside) - 1 < MIN_PERIODS * lag:
        return None, f"fewer than {MIN_PERIODS:g} step periods sampled: measure more steps"
    return lag, None


def periodicity(
    samples: Samples, cores: Sequence[int], t0: int, t1: int, period_ns: float
) -> tuple[list[float | None] | None, str | None]:
    """Per-core autocorrelation at one step period, or None and the reason it cannot be measured."""
    if not cores or f"cpu{cores[0]}_active_ticks" not in samples.columns:
        return None, "no per-core CPU time samples"
    lag, note = step_lag(samples, t0, t1, period_ns)
    if lag is None:
        return None, note
    values = [autocorrelation_at(interval_utilization(samples, c, t0, t1), lag) for c in cores]
    if all(v is None for v in values):
        return values, "utilization did not vary within the steps (nothing periodic to detect)"
    return values, None


def series_periodicity(
    samples: Samples, t0: int, t1: int, period_ns: float
) -> tuple[dict[str, float | None] | None, dict[str, float | None] | None, str | None]:
    """Autocorrelation at one step period of each GPU's utilization and each power rail's readings (as sampled:
    a reading is the sensor's own, no interval arithmetic), with why where none can be measured."""
    from edgebench.measure.power import power_channels, power_series_w

    gpus = {c.split("_", 1)[0]: v for c, v in samples.columns.items()
            if c.startswith("gpu") and c.endswith(("_util_pct", "_load_permille"))}  # fmt: skip
    channels = power_channels(samples)
    if not gpus and not channels:
        return None, None, "no GPU utilization or power rail sampled"
    lag, note = step_lag(samples, t0, t1, period_ns)
    if lag is None:
        return None, None, note
    inside = (samples.t_ns >= t0) & (samples.t_ns <= t1)
    gpu = {name: autocorrelation_at(values[inside], lag) for name, values in gpus.items()} or None
    power: dict[str, float | None] = {}
    for channel in channels:
        t, watts = power_series_w(samples, channel)
        # Readings on the sampler's clock; one per interval where the rail was read (a counter: one fewer).
        window = (t >= t0) & (t <= t1)
        power[channel.name] = autocorrelation_at(watts[window], lag)
    values = [v for v in [*(gpu or {}).values(), *power.values()]]
    why = (
        "the series did not vary within the steps (nothing periodic to detect)"
        if all(v is None for v in values)
        else None
    )
    return gpu, power or None, why


def predictability(
    step_ms: np.ndarray, samples: Samples | None, cores: Sequence[int], t0: int, t1: int
) -> Predictability:
    """Step-time CV, steps for a +/-1% and +/-5% interval, and utilization periodicity at the step period."""
    step_ms = np.asarray(step_ms, dtype=np.float64)
    mean = float(step_ms.mean())
    cv = float(step_ms.std(ddof=1) / mean) if len(step_ms) > 1 and mean > 0 else 0.0
    per_core: list[float | None] | None = None
    note: str | None = "no samples"
    if samples is not None and len(samples) >= 2:
        per_core, note = periodicity(samples, cores, t0, t1, mean * 1e6)
    known = [v for v in per_core or [] if v is not None]
    return Predictability(
        step_time_cv=cv,
        steps_for_ci_1pct=steps_for_ci(cv, 0.01) if len(step_ms) > 1 else None,
        steps_for_ci_5pct=steps_for_ci(cv, 0.05) if len(step_ms) > 1 else None,
        step_period_ms=mean,
        utilization_periodicity=per_core,
        utilization_periodicity_mean=float(np.mean(known)) if known else None,
        periodicity_note=note,
    )


def step_series_periodicity(step_ms: np.ndarray, samples: Samples | None, t0: int, t1: int) -> SeriesPeriodicity:
    """:func:`series_periodicity` at the mean step period, as the result records it."""
    if samples is None or len(samples) < 2 or not len(step_ms):
        return SeriesPeriodicity(note="no samples")
    gpu, power, note = series_periodicity(samples, t0, t1, float(np.mean(step_ms)) * 1e6)
    return SeriesPeriodicity(gpu=gpu, power=power, note=note)
