"""The roofline of one piece of work: where its arithmetic intensity puts it against the device's ceilings.

Attainable GFLOP/s at intensity ``I`` (FLOP per byte moved) is ``min(peak GFLOP/s, I x bandwidth GB/s)``
(Williams, Waterman and Patterson, 2009).  Work left of the ridge point (``peak / bandwidth``) is memory-bound,
right of it compute-bound.  Here the peak is the measured GEMM rate and the bandwidth the measured copy rate
(:mod:`edgebench.backends.torch.peak`), and the bytes are an estimate (the torch backend's
:mod:`edgebench.graph.layer_costs`): a point is a
guide to which ceiling a layer is near, not an exact bound.

For memory-bound work ``achieved / attainable`` equals ``achieved GB/s / bandwidth``, so work with bytes but no
counted FLOPs (element-wise ops, pooling) still gets a share of its roof: the share of the copy bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RooflinePoint:
    intensity_flop_per_byte: float | None
    achieved_gflops: float | None
    achieved_gbps: float | None
    attainable_gflops: float | None
    bound: Literal["compute", "memory"] | None
    #: Achieved over the measured GEMM peak, percent.
    peak_pct: float | None
    #: Achieved over what the roofline allows at this intensity, percent.
    roof_pct: float | None


def roofline_point(
    flops: float | None, bytes_moved: float | None, seconds: float, gemm_gflops: float | None, copy_gbps: float | None
) -> RooflinePoint:
    """Place work of ``flops`` FLOPs and ``bytes_moved`` bytes that took ``seconds`` under the device's roofline.

    Figures that need a missing input are None: no FLOPs counted (element-wise work) means no achieved GFLOP/s;
    no measured peak means no shares of it.
    """
    has_flops = flops is not None and flops > 0 and seconds > 0
    has_bytes = bytes_moved is not None and bytes_moved > 0 and seconds > 0
    achieved = flops / seconds / 1e9 if has_flops else None  # type: ignore[operator]
    gbps = bytes_moved / seconds / 1e9 if has_bytes else None  # type: ignore[operator]
    intensity = flops / bytes_moved if has_flops and has_bytes else (0.0 if has_bytes else None)  # type: ignore[operator]
    attainable: float | None = None
    bound: Literal["compute", "memory"] | None = None
    roof_pct: float | None = None
    if intensity is not None and gemm_gflops and copy_gbps:
        memory_roof = intensity * copy_gbps
        bound = "memory" if memory_roof < gemm_gflops else "compute"
        if achieved is not None:
            attainable = min(gemm_gflops, memory_roof)
            roof_pct = 100.0 * achieved / attainable
        elif gbps is not None:  # no counted FLOPs (element-wise work): its roof is the bandwidth alone
            roof_pct = 100.0 * gbps / copy_gbps
    return RooflinePoint(
        intensity_flop_per_byte=intensity,
        achieved_gflops=achieved,
        achieved_gbps=gbps,
        attainable_gflops=attainable,
        bound=bound,
        peak_pct=100.0 * achieved / gemm_gflops if achieved is not None and gemm_gflops else None,
        roof_pct=roof_pct,
    )
