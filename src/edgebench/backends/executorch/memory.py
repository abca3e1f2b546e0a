"""Memory by category of an ExecuTorch trial, as far as the runtime shows it.

ExecuTorch plans a method's mutable memory ahead of time: one arena per ``non_const_buffer_sizes`` entry of the
program, allocated once when the method loads, holding every intermediate tensor (and, in a training program, the
gradients and the weights the optimizer updates) at offsets chosen so that tensors whose lifetimes do not overlap
share bytes.  What the worker measures: the resident memory before the program is loaded (the runtime: torch and
ExecuTorch's libraries), the program's bytes (its weights as stored, delegate blobs included: the worker keeps them for
the program's life, as the runtime requires), a training program's parameters and gradients (the runtime's own
tensors, by size) and the input batch.  The arena is reported in bytes with what it holds; its parts cannot be told
apart (no per-tensor view of the plan at run time), so saved activations are not a figure of their own.

What the runtime hides, named in ``unexposed``: XNNPACK's packed copy of the weights and its workspace (the delegate
allocates them with ``malloc`` when the method loads), the method and temporary allocators' metadata, and
``get_sgd_optimizer``'s momentum buffers (``malloc`` in ``extension/training/optimizer/sgd.cpp``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from edgebench.records.memory import MemoryByCategory
from edgebench.units import format_size

#: A training program's parameters and gradients (the runtime's tensors).
Tensors = tuple[Sequence[Any], Sequence[Any]]


def arena_text(planned_bytes: Sequence[int]) -> str:
    return format_size(sum(planned_bytes))


class ExecuTorchMemory:
    """The categories the runtime exposes, read once (they do not change from step to step); the worker adds the
    peak."""

    def __init__(self, *, mode: str, batch_size: int, runtime_bytes: int | None, program_bytes: int,
                 planned_bytes: Sequence[int], input_bytes: int, delegated: bool,
                 tensors: Tensors | None = None, momentum: float = 0.0) -> None:  # fmt: skip
        arena = arena_text(planned_bytes)
        hidden = []
        if delegated:
            hidden.append("XNNPACK's packed weights and workspace: allocated by the delegate, not exposed (in other)")
        if mode == "train":
            params, grads = tensors or ((), ())
            state = "no momentum buffers at momentum 0" if momentum == 0 else "its momentum buffers (one per parameter)"
            hidden += [
                f"saved activations: inside ExecuTorch's planned arena of {arena} (activations, temporaries, the "
                "gradients and the updated weights, sharing bytes by lifetime; not separable at run time)",
                f"optimizer state: get_sgd_optimizer keeps {state} in C++, not exposed",
            ]
            self.result = MemoryByCategory(
                device="cpu",
                mode=mode,
                batch_size=batch_size,
                runtime_bytes=runtime_bytes,
                params_bytes=sum(_nbytes(t) for t in params),
                gradients_bytes=sum(_nbytes(t) for t in grads),
                input_bytes=input_bytes,
                unexposed=hidden,
            )
            return
        hidden.insert(0, f"gradients, optimizer state, saved activations: none in inference; the intermediate tensors "
                      f"are ExecuTorch's planned arena of {arena} (in other)")  # fmt: skip
        self.result = MemoryByCategory(
            device="cpu",
            mode=mode,
            batch_size=batch_size,
            runtime_bytes=runtime_bytes,
            params_bytes=program_bytes,
            input_bytes=input_bytes,
            unexposed=hidden,
        )

    def categorizing(self, step: Callable[[], Any]) -> Callable[[], Any]:
        return step

    def ensure(self, step: Callable[[], Any]) -> None:
        """Nothing to run: what ExecuTorch exposes is read without a step."""

    def with_peak(self, peak_bytes: int | None) -> MemoryByCategory:
        return self.result.model_copy(update={"peak_bytes": peak_bytes})


def _nbytes(tensor: Any) -> int:
    return int(tensor.numel()) * int(tensor.element_size())
