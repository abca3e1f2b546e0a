"""Where the best partition point moves as the uplink bandwidth changes: the crossover bandwidths.

Each point's bytes and compute do not depend on the link, so the sweep re-prices the rows
(:func:`~edgebench.partition.solver.reprice`) on a log-spaced grid and bisects each change of the best point
down to 0.1% of the bandwidth.  The downlink scales with the uplink in the profile's proportion.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from edgebench.partition.network import NetworkProfile
from edgebench.partition.solver import Objective, PointCost, best_point, reprice
from edgebench.units import bounded

_RANGE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*-\s*([0-9]*\.?[0-9]+)\s*(kbps|mbps|gbps)?\s*$", re.IGNORECASE)
_SCALE = {"kbps": 1e-3, "mbps": 1.0, "gbps": 1e3}


def parse_bandwidth_range(text: str) -> tuple[float, float]:
    """``0.5-100Mbps`` -> ``(0.5, 100.0)`` in Mbps (kbps and Gbps too; a bare range is Mbps)."""
    match = _RANGE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a bandwidth range such as 0.5-100Mbps")
    scale = _SCALE[(match.group(3) or "mbps").lower()]
    lo, hi = bounded(float(match.group(1)) * scale, text), bounded(float(match.group(2)) * scale, text)
    if not 0 < lo < hi:
        raise ValueError(f"{text!r}: the range must be positive and rising, such as 0.5-100Mbps")
    return lo, hi


@dataclass(frozen=True)
class SweepSegment:
    """A bandwidth range over which one point stays the best."""

    from_mbps: float
    to_mbps: float
    point: int
    layer: str
    kind: str
    value_at_from: float
    value_at_to: float


def _best(rows: Sequence[PointCost], network: NetworkProfile, up_mbps: float, objective: Objective) -> PointCost:
    link = network.at_uplink(up_mbps)
    return best_point([reprice(r, link) for r in rows], objective)


def sweep_bandwidth(
    rows: Sequence[PointCost],
    network: NetworkProfile,
    objective: Objective,
    lo_mbps: float,
    hi_mbps: float,
    *,
    grid: int = 80,
) -> list[SweepSegment]:
    """The best point over ``[lo_mbps, hi_mbps]`` as segments; consecutive segments meet at a crossover."""
    steps = [lo_mbps * (hi_mbps / lo_mbps) ** (i / (grid - 1)) for i in range(grid)]
    segments: list[SweepSegment] = []
    start = lo_mbps
    current = _best(rows, network, lo_mbps, objective)
    for a, b in itertools.pairwise(steps):
        nxt = _best(rows, network, b, objective)
        if nxt.point == current.point:
            continue
        x, y = a, b  # the best changes in (a, b]: bisect in log space
        while y / x > 1.001:
            mid = math.sqrt(x * y)
            if _best(rows, network, mid, objective).point == current.point:
                x = mid
            else:
                y = mid
        segments.append(_segment(rows, network, objective, start, y, current))
        start, current = y, _best(rows, network, y, objective)
    segments.append(_segment(rows, network, objective, start, hi_mbps, current))
    return segments


def _segment(
    rows: Sequence[PointCost], network: NetworkProfile, objective: Objective, a: float, b: float, best: PointCost
) -> SweepSegment:
    row = rows[[r.point for r in rows].index(best.point)]
    at_a = reprice(row, network.at_uplink(a)).value(objective)
    at_b = reprice(row, network.at_uplink(b)).value(objective)
    return SweepSegment(a, b, best.point, best.layer, best.kind, float(at_a or 0.0), float(at_b or 0.0))
