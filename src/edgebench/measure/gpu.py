"""GPU utilization over a window (the characterization paper's equation 3), from whichever GPU sensor exists.

Both NVML (``gpuN_util_pct``) and the Jetson's ``load`` (``gpuN_load_permille``) report the share of a recent
interval the GPU was busy, so their mean over the training window is the GPU's active time over the window.
"""

from __future__ import annotations

import math
import re

import numpy as np

from edgebench.sensors.samples import Samples

_GPU_COLUMN = re.compile(r"^gpu(\d+)_(util_pct|load_permille)$")


def gpu_utilization_pct(samples: Samples, t0: int, t1: int) -> list[float]:
    """Mean utilization in percent of each GPU over ``[t0, t1]`` (NaN for a GPU without a reading there).

    The readings taken inside the window count; a window shorter than the polling period, with none inside, takes
    the readings just before and after it.
    """
    out: dict[int, float] = {}
    lo = int(np.searchsorted(samples.t_ns, t0))
    hi = int(np.searchsorted(samples.t_ns, t1, side="right"))
    for column, values in samples.columns.items():
        match = _GPU_COLUMN.match(column)
        if not match:
            continue
        window = values[lo:hi]
        window = window[~np.isnan(window)]
        if not len(window):
            around = values[max(lo - 1, 0) : hi + 1]
            window = around[~np.isnan(around)]
        scale = 0.1 if match.group(2) == "load_permille" else 1.0
        out[int(match.group(1))] = float(window.mean()) * scale if len(window) else math.nan
    return [out[i] for i in sorted(out)]
