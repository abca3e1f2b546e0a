"""Summary statistics of repeated timings."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from edgebench.records.result import Stats


def t975(df: int | np.ndarray) -> float | np.ndarray:
    """Student's t quantile at 0.975 for ``df`` degrees of freedom (what ``scipy.stats.t.ppf(0.975, df)`` gives),
    from ``scipy.special``: ``scipy.stats`` costs 0.6 s to import, and even ``scipy.special`` (0.1-0.3 s) is
    imported only when a summary is made, not by every command that merely refuses its input."""
    from scipy.special import stdtrit

    return stdtrit(df, 0.975)


def ci95_half_width(values: Sequence[float] | np.ndarray) -> float:
    """Half-width of the 95% confidence interval of the mean (Student t, n-1 degrees of freedom)."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        return math.nan
    return float(t975(len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))


def summarize(values: Sequence[float] | np.ndarray) -> Stats:
    """Mean, median, 5th/95th percentiles (linear interpolation), sample std, ci95 and coefficient of variation."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        raise ValueError("no values to summarize")
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if len(x) > 1 else 0.0
    p5, median, p95 = (float(v) for v in np.percentile(x, [5, 50, 95]))
    return Stats(
        mean=mean,
        median=median,
        p5=p5,
        p95=p95,
        std=std,
        ci95=ci95_half_width(x) if len(x) > 1 else 0.0,
        n=len(x),
        cv=std / mean if mean else 0.0,
    )
