"""Memory by category of an MNN trial, as far as MNN's Python API exposes it.

MNN shows its trainable parameters as variables with a shape and a type, and the batch is a numpy array this
worker holds, so parameters (training) and the input batch are measured; the resident memory before the model is
built is the runtime.  Its executor keeps gradients, the optimizer's momentum and the saved activations inside
C++ with no per-tensor view from Python, so those are None and named in ``unexposed``, never estimated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from edgebench.records.memory import MemoryByCategory

#: Bytes per element of MNN's variable types (``MNN.expr.dtype``), by name.
_ITEM_BYTES = {"float": 4, "double": 8, "int": 4, "int64": 8, "uint8": 1, "int8": 1}
_HIDDEN = "not exposed by MNN's Python API (its executor keeps them in C++ with no per-tensor view)"


def params_bytes(parameters: list[Any]) -> int | None:
    """Bytes of MNN variables from their element counts and types; None if a type is one this table lacks."""
    total = 0
    for p in parameters:
        item = _ITEM_BYTES.get(str(p.dtype).rsplit(".", 1)[-1])
        if item is None:
            return None
        total += int(p.size) * item
    return total


class MnnMemory:
    """The categories MNN exposes, read once (they do not change from step to step); the worker adds the peak."""

    def __init__(self, *, mode: str, batch_size: int, runtime_bytes: int | None, params: int | None,
                 inputs: np.ndarray) -> None:  # fmt: skip
        train = mode == "train"
        what = "gradients, optimizer state, saved activations: "
        hidden = [what + (_HIDDEN if train else "none in inference")]
        if params is None:
            hidden.append("parameters: " + ("a variable type without a known size" if train else _HIDDEN))
        self.result = MemoryByCategory(
            device="cpu",
            mode=mode,
            batch_size=batch_size,
            runtime_bytes=runtime_bytes,
            params_bytes=params,
            input_bytes=int(inputs.nbytes),
            unexposed=hidden,
        )

    def categorizing(self, step: Callable[[], Any]) -> Callable[[], Any]:
        return step

    def ensure(self, step: Callable[[], Any]) -> None:
        """Nothing to run: what MNN exposes is read without a step."""

    def with_peak(self, peak_bytes: int | None) -> MemoryByCategory:
        return self.result.model_copy(update={"peak_bytes": peak_bytes})
