"""Predictability figures on synthetic series with known answers."""

import math

import numpy as np
import pytest
from scipy import stats

from edgebench.measure.predictability import autocorrelation_at, periodicity, predictability, steps_for_ci
from edgebench.sensors.samples import Samples

MS = 1_000_000


def test_a_periodic_series_correlates_fully_at_its_period_and_inversely_at_half():
    x = np.sin(2 * np.pi * np.arange(200) / 10)
    assert autocorrelation_at(x, 10) == pytest.approx(1.0)
    assert autocorrelation_at(x, 5) == pytest.approx(-1.0)
    square = np.tile([1.0] * 4 + [0.0] * 4, 30)
    assert autocorrelation_at(square, 8) == pytest.approx(1.0)
    assert autocorrelation_at(square, 4) == pytest.approx(-1.0)


def test_fractional_lag_is_interpolated():
    # a period of 7.5 samples: integer lags 7 and 8 both fall short of 1; 7.5 interpolates between them
    x = np.sin(2 * np.pi * np.arange(600) / 7.5)
    at_period = autocorrelation_at(x, 7.5)
    assert at_period > 0.99
    assert at_period > autocorrelation_at(x, 7) and at_period > autocorrelation_at(x, 8)


def test_noise_does_not_correlate():
    x = np.random.default_rng(0).normal(size=5000)
    assert abs(autocorrelation_at(x, 13)) < 0.05


def test_constant_or_too_short_series_has_no_answer():
    assert autocorrelation_at(np.ones(100), 5) is None
    assert autocorrelation_at(np.arange(10.0), 5) is None


def test_missing_values_are_left_out():
    x = np.tile([1.0, 0.0], 50)
    x[::7] = np.nan
    assert autocorrelation_at(x, 2) == pytest.approx(1.0)


def test_steps_for_a_confidence_interval():
    n = steps_for_ci(0.05, 0.01)
    assert stats.t.ppf(0.975, n - 1) * 0.05 / math.sqrt(n) <= 0.01
    assert stats.t.ppf(0.975, n - 2) * 0.05 / math.sqrt(n - 1) > 0.01  # the smallest such n
    assert 98 <= n <= 102  # (1.96 * 5)^2 = 96, plus the t correction
    assert steps_for_ci(0.0, 0.01) == 2
    assert steps_for_ci(0.05, 0.05) < n


def tick_samples(busy: np.ndarray, cores: int = 1) -> Samples:
    """Cumulative tick counters from a 0/1 busy pattern per 10 ms interval (one tick per interval)."""
    columns = {}
    for c in range(cores):
        pattern = busy if c == 0 else np.roll(busy, c)
        columns[f"cpu{c}_active_ticks"] = np.concatenate([[0.0], np.cumsum(pattern)])
        columns[f"cpu{c}_idle_ticks"] = np.concatenate([[0.0], np.cumsum(1 - pattern)])
    t = np.arange(len(busy) + 1, dtype=np.int64) * 10 * MS
    return Samples(t, columns)


def test_utilization_periodic_with_the_step_is_detected():
    # a 60 ms step: 40 ms busy, 20 ms idle, repeated 20 times
    busy = np.tile([1.0, 1.0, 1.0, 1.0, 0.0, 0.0], 20)
    samples = tick_samples(busy, cores=2)
    values, note = periodicity(samples, [0, 1], 0, int(samples.t_ns[-1]), 60 * MS)
    assert note is None and values == pytest.approx([1.0, 1.0])


def test_aperiodic_utilization_is_not():
    busy = (np.random.default_rng(1).random(600) < 0.5).astype(float)
    samples = tick_samples(busy)
    (value,), _ = periodicity(samples, [0], 0, int(samples.t_ns[-1]), 60 * MS)
    assert abs(value) < 0.15


def test_periodicity_explains_why_it_cannot_be_measured():
    busy = np.tile([1.0, 0.0], 50)
    samples = tick_samples(busy)
    values, note = periodicity(samples, [0], 0, int(samples.t_ns[-1]), 12 * MS)
    assert values is None and "shorter than two sampling intervals" in note
    values, note = periodicity(samples, [0], 0, int(samples.t_ns[-1]), 400 * MS)
    assert values is None and "fewer than 3 step periods" in note
    flat = tick_samples(np.ones(100))
    values, note = periodicity(flat, [0], 0, int(flat.t_ns[-1]), 50 * MS)
    assert values == [None] and "did not vary" in note


def test_predictability_record():
    busy = np.tile([1.0, 1.0, 1.0, 1.0, 0.0, 0.0], 20)
    samples = tick_samples(busy)
    step_ms = np.array([60.0, 61.0, 59.0, 60.0, 60.5, 59.5])
    p = predictability(step_ms, samples, [0], 0, int(samples.t_ns[-1]))
    assert p.step_time_cv == pytest.approx(step_ms.std(ddof=1) / step_ms.mean())
    assert p.step_period_ms == pytest.approx(60.0)
    assert p.utilization_periodicity == pytest.approx([1.0]) and p.utilization_periodicity_mean == pytest.approx(1.0)
    assert p.steps_for_ci_1pct == steps_for_ci(p.step_time_cv, 0.01)
    assert predictability(step_ms, None, [0], 0, 1).periodicity_note == "no samples"


def test_gpu_utilization_periodic_with_the_step_is_detected_and_a_flat_one_says_so():
    from edgebench.measure.predictability import series_periodicity

    load = np.tile([900.0, 900.0, 900.0, 100.0, 100.0, 100.0], 20)  # the Jetson's per mille, a 60 ms step
    t = np.arange(len(load), dtype=np.int64) * 10 * MS
    gpu, power, note = series_periodicity(Samples(t, {"gpu0_load_permille": load}), 0, int(t[-1]), 60 * MS)
    assert note is None and power is None and gpu == {"gpu0": pytest.approx(1.0)}
    gpu, _, note = series_periodicity(Samples(t, {"gpu0_load_permille": np.ones(len(t))}), 0, int(t[-1]), 60 * MS)
    assert gpu == {"gpu0": None} and "did not vary" in note
    _, _, note = series_periodicity(tick_samples(np.ones(50)), 0, 500 * MS, 60 * MS)
    assert note == "no GPU utilization or power rail sampled"


def test_a_series_that_differs_only_by_rounding_is_flat():
    """Power computed from still readings (mW x mV / mA arithmetic) differs in its last bits; that is no pattern."""
    x = np.array([2.981, 2.9810000000000003] * 20)
    assert autocorrelation_at(x, 2) is None
    assert autocorrelation_at(x + np.tile([0.0, 0.5], 20), 2) == pytest.approx(1.0)
