"""The interval estimates a verdict rests on, each with the name of the method that gave it, all from
``scipy.stats`` (Student t intervals, ``ttest_rel`` and ``ttest_ind`` with Welch's correction, ``linregress``,
``pearsonr``'s Fisher interval): no hand-written quantile or standard error.

Every function returns an :class:`Interval` (estimate, 95% bounds, n, method) or None where the data cannot give
one (too few points, no spread in x); none returns a bare number a verdict could be drawn from.  Data that do not
vary at all (a copied sensor tree) give a zero-width interval, which is what they support.

The units are independent measurements: trials (each a fresh worker process, so repeats of a configuration are
independent draws of it), or series; never the steps of one process, which share that process's offset and are
autocorrelated (:mod:`edgebench.measure.repeats`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from edgebench.measure.repeats import Interval

__all__ = ["LEVEL", "Fit", "Interval", "correlation", "fisher_mean", "linear_fit", "loglog_exponent",
           "mean_interval", "paired_difference", "ratio_interval", "slope", "slope_difference",
           "welch_difference"]  # fmt: skip

LEVEL = 0.95


def _finite(values: Sequence[float | None]) -> np.ndarray:
    return np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=np.float64)


def _t_interval(estimate: float, se: float, df: float, n: int, method: str, level: float) -> Interval:
    from scipy import stats

    if se == 0:
        return Interval(estimate, estimate, estimate, n, f"{method} (no spread: exact)")
    low, high = stats.t.interval(level, df, loc=estimate, scale=se)
    return Interval(estimate, float(low), float(high), n, method)


def mean_interval(values: Sequence[float], level: float = LEVEL) -> Interval | None:
    """The mean with its Student t interval (n-1 degrees of freedom); needs two values."""
    from scipy import stats

    x = _finite(values)
    if len(x) < 2:
        return None
    return _t_interval(float(x.mean()), float(stats.sem(x)), len(x) - 1, len(x), "mean, Student t interval", level)


def paired_difference(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval | None:
    """Mean of ``a[i] - b[i]`` with the paired t test's interval (``scipy.stats.ttest_rel``)."""
    from scipy import stats

    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(x) < 2:
        return None
    d = float((x - y).mean())
    if np.all(x - y == d):
        return Interval(d, d, d, len(x), "paired difference (no spread: exact)")
    ci = stats.ttest_rel(x, y).confidence_interval(level)
    return Interval(d, float(ci.low), float(ci.high), len(x), "paired difference, Student t interval")


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
    """Pearson's r with its Fisher z interval (``scipy.stats.pearsonr``); None with fewer than four pairs or no
    spread."""
    from scipy import stats

    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(a) < 4 or a.std() == 0 or b.std() == 0:
        return None
    found = stats.pearsonr(a, b)
    ci = found.confidence_interval(level)
    return Interval(float(found.statistic), float(ci.low), float(ci.high), len(a), "Pearson r, Fisher z interval")


@dataclass(frozen=True)
class Fit:
    slope: float
    se: float
    df: int
    n: int

    def interval(self, method: str, level: float = LEVEL) -> Interval:
        if self.df <= 0:
            return Interval(self.slope, -math.inf, math.inf, self.n, method)
        return _t_interval(self.slope, self.se, self.df, self.n, method, level)


def linear_fit(x: Sequence[float], y: Sequence[float]) -> Fit | None:
    """Ordinary least squares of y on x (``scipy.stats.linregress``): the slope and its standard error; needs three
    points and two x values."""
    from scipy import stats

    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(a) < 3 or len(set(a.tolist())) < 2:
        return None
    if np.all(b == b[0]):  # y never moved (a copied sensor tree): a flat line, exactly (linregress gives no stderr)
        return Fit(0.0, 0.0, len(a) - 2, len(a))
    found = stats.linregress(a, b)
    return Fit(float(found.slope), float(found.stderr), len(a) - 2, len(a))


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
    df = min(a.df, b.df)
    n = a.n + b.n
    if df <= 0:
        return Interval(a.slope - b.slope, -math.inf, math.inf, n, method)
    return _t_interval(a.slope - b.slope, math.sqrt(a.se**2 + b.se**2), df, n, method, level)


def welch_difference(a: Sequence[float], b: Sequence[float], level: float = LEVEL) -> Interval | None:
    """mean(a) - mean(b) with Welch's interval (``scipy.stats.ttest_ind``, ``equal_var=False``); two values on each
    side."""
    from scipy import stats

    x, y = _finite(a), _finite(b)
    if len(x) < 2 or len(y) < 2:
        return None
    d = float(x.mean() - y.mean())
    if x.std() == 0 and y.std() == 0:
        return Interval(d, d, d, len(x) + len(y), "Welch difference of means (no spread: exact)")
    ci = stats.ttest_ind(x, y, equal_var=False).confidence_interval(level)
    return Interval(d, float(ci.low), float(ci.high), len(x) + len(y), "Welch difference of means, t interval")


def ratio_interval(a: Sequence[float], b: Sequence[float], what: str = "median step times", level: float = LEVEL
                   ) -> Interval | None:  # fmt: skip
    """The ratio of a's repeats to b's (geometric means of one value per repeat) with Welch's interval on the log
    scale (``scipy.stats.ttest_ind``, ``equal_var=False``): the repeat-level decision every comparison takes
    (:func:`edgebench.measure.repeats.compare_repeats`), so a difference within the run-to-run spread is
    inconclusive.  Needs two repeats on each side (one process says nothing of the next)."""
    from scipy import stats

    x = np.log(_finite([v for v in a if v is not None and v > 0]))
    y = np.log(_finite([v for v in b if v is not None and v > 0]))
    if len(x) < 2 or len(y) < 2:
        return None
    r = math.exp(float(x.mean() - y.mean()))
    method = f"ratio of repeats' {what} ({len(x)} vs {len(y)}), Welch t interval on the log scale"
    if x.std() == 0 and y.std() == 0:
        return Interval(r, r, r, len(x) + len(y), f"{method} (no spread: exact)")
    ci = stats.ttest_ind(x, y, equal_var=False).confidence_interval(level)
    return Interval(r, math.exp(ci.low), math.exp(ci.high), len(x) + len(y), method)
