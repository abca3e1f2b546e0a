"""Memory by category: what a trial's memory holds (parameters, gradients, optimizer state, input, saved
activations, the framework's own runtime; for a language model also its frozen weights, its KV cache and its
buffers), measured by the worker, beside the peak it reached.

The characterization paper's Figure 9 splits training memory this way per batch size; one peak RSS cannot say
whether a larger batch will fit, because only the input and the activations grow with the batch.  Every figure here
is measured in bytes by the backend that ran the trial (tensor storages counted once each); a category the backend
cannot see is None and named in ``unexposed`` with why, never guessed.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from edgebench.records.model import Record

#: The categories in the order the tables print them: (field, label, a table's short heading).
CATEGORIES: tuple[tuple[str, str, str], ...] = (
    ("runtime_bytes", "runtime", "runtime"),
    ("params_bytes", "parameters", "params"),
    ("frozen_params_bytes", "frozen weights", "frozen"),
    ("gradients_bytes", "gradients", "grads"),
    ("optimizer_bytes", "optimizer state", "optim"),
    ("input_bytes", "input batch", "input"),
    ("activations_bytes", "saved activations", "activ"),
    ("kv_cache_bytes", "KV cache", "kv"),
    ("buffers_bytes", "buffers", "bufs"),
)


class MemoryByCategory(Record):
    """One trial's memory split by what holds it, in bytes.

    ``runtime_bytes`` is the worker's resident memory before the model is built (the interpreter and the
    framework's libraries); the tensor categories live on ``device``.  ``peak_bytes`` is the phase's peak on that
    device: resident memory (which includes the runtime) on the CPU, the allocator's peak on CUDA (which does not).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: Where the tensors live: ``cpu`` or ``cuda``.
    device: str = "cpu"
    #: ``train`` (the categories of one training step) or ``infer`` (of one forward pass).
    mode: str = "train"
    batch_size: int | None = None
    runtime_bytes: int | None = None
    #: The parameters that train (``requires_grad``): every parameter of a full fine-tune, LoRA's adapters.
    params_bytes: int | None = None
    #: Weights that do not train: a LoRA fine-tune's frozen base (fp32, or its int8 weights and scales), an
    #: inference model whose weights were frozen.  None in records stored before it was measured.
    frozen_params_bytes: int | None = None
    gradients_bytes: int | None = None
    optimizer_bytes: int | None = None
    input_bytes: int | None = None
    #: Tensors the autograd graph saved for the backward pass, less those that are parameters or the input.
    activations_bytes: int | None = None
    #: A language model's KV cache as allocated (every layer's K and V for the positions it holds).
    kv_cache_bytes: int | None = None
    #: The model's other buffers: rotary tables, batch-norm statistics (None in records stored before).
    buffers_bytes: int | None = None
    peak_bytes: int | None = None
    #: Whether ``peak_bytes`` includes the runtime (CPU resident memory does; a CUDA allocator's peak does not).
    peak_includes_runtime: bool = True
    #: ``category: why`` for each category this backend cannot measure (None above).
    unexposed: list[str] = Field(default_factory=list)

    def value(self, field: str) -> int | None:
        return getattr(self, field)

    @property
    def counted_bytes(self) -> int:
        """The sum of the measured categories that the peak includes."""
        fields = [f for f, _, _ in CATEGORIES if f != "runtime_bytes" or self.peak_includes_runtime]
        return sum(v for v in (self.value(f) for f in fields) if v is not None)

    @property
    def other_bytes(self) -> int | None:
        """Peak less the measured categories: temporaries, workspaces, allocator caches (negative would mean a
        category was counted that the peak did not hold at once)."""
        return None if self.peak_bytes is None else self.peak_bytes - self.counted_bytes
