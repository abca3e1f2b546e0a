"""The interval estimates a verdict rests on, each with the name of the method that gave it.

Every function returns an :class:`Interval` (estimate, 95% bounds, n, method) or None where the data cannot give
one (too few points, no spread in x); none returns a bare number a verdict could be drawn from.  Data that do not
vary at all (a copied sensor tree) give a zero-width interval, which is what they support.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    n: int
    method: str


def _t(df: float, level: float = LEVEL) -> float:
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + level / 2))


def mean_interval(values: Sequence[float], level: float = LEVEL) -> Interval | None:
    """The mean with its Student t interval (n-1 degrees of freedom); needs two values."""
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)
    if len(x) < 2:
        return None
    mean = float(x.mean())
    half = _t(len(x) - 1, level) * float(x.std(ddof=1)) / math.sqrt(len(x))
    return Interval(mean, mean - half, mean + half, len(x), "mean, Student t interval")


def paired_difference(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval | None:
    """Mean of ``a[i] - b[i]`` with its t interval (a paired t test's interval)."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    found = mean_interval(diffs, level)
    if found is None:
        return None
    return Interval(found.estimate, found.low, found.high, found.n, "paired difference, Student t interval")


def fisher_mean(correlations: Sequence[float], level: float = LEVEL) -> Interval | None:
    """The mean of correlations over independent series: a t interval over their Fisher z, transformed back.

    The series' own lag pairs are not independent (a sampled series is autocorrelated), so the interval comes from
    the spread between series, not from the number of pairs in each.
    """
    z = [math.atanh(max(-0.999999, min(0.999999, r))) for r in correlations if r is not None and math.isfinite(r)]
    found = mean_interval(z, level)
    if found is None:
        return None
    return Interval(
        math.tanh(found.estimate), math.tanh(found.low), math.tanh(found.high), found.n,
        "Fisher z of each series' autocorrelation, t interval over series",
    )  # fmt: skip


def correlation(x: Sequence[float], y: Sequence[float], level: float = LEVEL) -> Interval | None:
    """Pearson's r with the Fisher z interval (n-3); None with fewer than four pairs or no spread."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(a) < 4 or a.std() == 0 or b.std() == 0:
        return None
    r = float(np.corrcoef(a, b)[0, 1])
    z, se = math.atanh(max(-0.999999, min(0.999999, r))), 1 / math.sqrt(len(a) - 3)
    q = _normal(level)
    return Interval(r, math.tanh(z - q * se), math.tanh(z + q * se), len(a), "Pearson r, Fisher z interval")


def _normal(level: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(0.5 + level / 2))


@dataclass(frozen=True)
class Fit:
    slope: float
    se: float
    df: int
    n: int

    def interval(self, method: str, level: float = LEVEL) -> Interval:
        half = _t(self.df, level) * self.se if self.df > 0 else math.inf
        return Interval(self.slope, self.slope - half, self.slope + half, self.n, method)


def linear_fit(x: Sequence[float], y: Sequence[float]) -> Fit | None:
    """Ordinary least squares of y on x: the slope and its standard error; needs three points and two x values."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(a) < 3 or len(set(a.tolist())) < 2:
        return None
    sxx = float(((a - a.mean()) ** 2).sum())
    slope = float(((a - a.mean()) * (b - b.mean())).sum() / sxx)
    resid = b - b.mean() - slope * (a - a.mean())
    df = len(a) - 2
    se = math.sqrt(float((resid**2).sum()) / df / sxx)
    return Fit(slope, se, df, len(a))


def slope(x: Sequence[float], y: Sequence[float], method: str = "OLS slope, t interval") -> Interval | None:
    fit = linear_fit(x, y)
    return None if fit is None else fit.interval(method)


def loglog_exponent(x: Sequence[float], y: Sequence[float]) -> Interval | None:
    """The exponent b of y = a * x^b: the OLS slope of log y on log x, with its t interval (positive values only)."""
    pairs = [(u, v) for u, v in zip(x, y, strict=True) if u and v and u > 0 and v > 0]
    if not pairs:
        return None
    return slope([math.log(u) for u, _ in pairs], [math.log(v) for _, v in pairs], "log-log OLS exponent, t interval")


def slope_difference(a: Fit, b: Fit, method: str, level: float = LEVEL) -> Interval:
    """a's slope less b's, the standard errors combined (independent fits), at the smaller of their dfs."""
    se = math.sqrt(a.se**2 + b.se**2)
    df = min(a.df, b.df)
    half = _t(df, level) * se if df > 0 else math.inf
    d = a.slope - b.slope
    return Interval(d, d - half, d + half, a.n + b.n, method)


def welch_difference(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval | None:
    """mean(a) - mean(b) with Welch's interval (Welch-Satterthwaite df); two values on each side."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if len(x) < 2 or len(y) < 2:
        return None
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    d = float(x.mean() - y.mean())
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(d, d, d, len(x) + len(y), "Welch difference of means (no spread: exact)")
    df = (va + vb) ** 2 / (va**2 / (len(x) - 1) + vb**2 / (len(y) - 1))
    half = _t(df, level) * se
    return Interval(d, d - half, d + half, len(x) + len(y), "Welch difference of means, t interval")


def welch_ratio(
    mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int, level: float = LEVEL
) -> Interval | None:
    """mean_a / mean_b from two sets of repeated measurements (steps), Welch on the log scale (delta method).

    Used for step times: the ratio of two configurations' mean step time with an interval from their steps'
    spread, so a 10% difference within the noise of the steps is inconclusive rather than a finding.
    """
    if min(n_a, n_b) < 2 or mean_a <= 0 or mean_b <= 0:
        return None
    va, vb = (sd_a / mean_a) ** 2 / n_a, (sd_b / mean_b) ** 2 / n_b
    log_ratio = math.log(mean_a / mean_b)
    se = math.sqrt(va + vb)
    if se == 0:
        r = math.exp(log_ratio)
        return Interval(r, r, r, n_a + n_b, "ratio of mean step times (no spread: exact)")
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    half = _t(df, level) * se
    return Interval(
        math.exp(log_ratio), math.exp(log_ratio - half), math.exp(log_ratio + half), n_a + n_b,
        "ratio of mean step times, Welch t interval on the log scale",
    )  # fmt: skip


def grouped_fit(x: Sequence[float], n: Sequence[int], mean: Sequence[float], var: Sequence[float]) -> Fit | None:
    """OLS of y on x over every repeated measurement, from each group's count, mean and variance of y.

    The same slope and standard error as fitting every step as its own point (the within-group spread enters the
    residuals), without the steps themselves: a stored trial keeps its step times' mean, spread and count.
    """
    xs, ns = np.asarray(x, dtype=np.float64), np.asarray(n, dtype=np.float64)
    ms, vs = np.asarray(mean, dtype=np.float64), np.asarray(var, dtype=np.float64)
    total = float(ns.sum())
    if len(xs) < 2 or len(set(xs.tolist())) < 2 or total < 3:
        return None
    xbar, ybar = float((ns * xs).sum() / total), float((ns * ms).sum() / total)
    sxx = float((ns * (xs - xbar) ** 2).sum())
    slope = float((ns * (xs - xbar) * (ms - ybar)).sum() / sxx)
    sse = float(((ns - 1) * vs).sum() + (ns * (ms - ybar - slope * (xs - xbar)) ** 2).sum())
    df = int(total) - 2
    return Fit(slope, math.sqrt(sse / df / sxx), df, int(total))
