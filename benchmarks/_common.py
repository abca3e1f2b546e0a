"""Shared by the benchmark scripts: interleaved rounds and a ratio with its uncertainty."""

from __future__ import annotations

import statistics
from collections.abc import Callable

import numpy as np


def interleave(rounds: int, runs: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    """Call each run once per round, alternating the order every round; returns each run's figures."""
    figures: dict[str, list[float]] = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            figures[name].append(runs[name]())
            print(f"  round {r + 1}/{rounds} {name}: {figures[name][-1]:.3f}", flush=True)
    return figures


def ratio_of_medians_ci(a: list[float], b: list[float], n_boot: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of median(a) / median(b), resampling the rounds of each side."""
    rng = np.random.default_rng(seed)
    xa, xb = np.asarray(a), np.asarray(b)
    ia = rng.integers(0, len(xa), (n_boot, len(xa)))
    ib = rng.integers(0, len(xb), (n_boot, len(xb)))
    ratios = np.median(xa[ia], axis=1) / np.median(xb[ib], axis=1)
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(lo), float(hi)


def ratio_line(label: str, numerator: list[float], denominator: list[float], target: str) -> str:
    """Ratio of medians, its 95% interval over rounds, and the target, on one line."""
    med_n, med_d = statistics.median(numerator), statistics.median(denominator)
    lo, hi = ratio_of_medians_ci(numerator, denominator)
    return (
        f"{label}: {med_n / med_d:.4f} (95% CI {lo:.3f}-{hi:.3f}; target {target}; "
        f"medians {med_n:.3f} / {med_d:.3f} over {len(numerator)} interleaved rounds)"
    )
