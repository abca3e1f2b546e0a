"""Numeric precision of a trial: fp32, or autocast mixed precision (bf16 / fp16 compute, fp32 weights).

Autocast is entered around every timed step rather than inside each task, so every task (classification and the
domains still to come) trains at the trial's precision without knowing about it.  It lives with the models, not in
the torch backend, because the layer graph (:mod:`edgebench.graph.torch_graph`) runs a model's step at the trial's
precision too, below the backends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_DTYPES = {"bf16": "bfloat16", "fp16": "float16"}


def at_precision(fn: Callable[[], Any], precision: str, device: str) -> Callable[[], Any]:
    """``fn`` itself for fp32 and int8 (the model itself is quantized, :mod:`edgebench.backends.torch.int8`);
    otherwise ``fn`` run under ``torch.autocast`` with the precision's dtype."""
    if precision in ("fp32", "int8"):
        return fn
    import torch

    dtype = getattr(torch, _DTYPES[precision])
    device_type = "cuda" if device.startswith("cuda") else "cpu"

    def step() -> Any:
        with torch.autocast(device_type, dtype=dtype):
            return fn()

    return step
