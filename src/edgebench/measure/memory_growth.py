"""How a model's memory grows with the batch size, from two measured batch sizes: a prediction of larger ones.

Only the input batch and the activations saved for backward grow with the batch among the categories
(parameters, gradients, optimizer state and the runtime do not), so two trials of the same model with memory by
category give the bytes each extra sample costs.  The peak also holds per-sample temporaries no category names
(the gradient of each activation during backward, a layer's unsaved output), so the measured growth of the peak
itself is read too and the larger of the two growths is used: the peak at a larger batch is predicted as the
larger measured peak plus that much per extra sample.  It is a prediction (workspaces and allocator rounding do
not scale exactly), stated as one, and
``edgebench feasibility`` checks it against the trials it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from edgebench.records.memory import MemoryByCategory


@dataclass(frozen=True)
class MemoryGrowth:
    """The per-sample growth between two measured batch sizes, and the larger one's peak it extrapolates from."""

    small_batch: int
    large_batch: int
    #: Bytes of input batch + saved activations per extra sample, measured between the two batch sizes.
    categories_per_sample_bytes: float
    #: Bytes of the measured peak per extra sample between the same two trials.
    peak_per_sample_bytes: float
    large_peak_bytes: int

    @property
    def per_sample_bytes(self) -> float:
        return max(self.categories_per_sample_bytes, self.peak_per_sample_bytes)

    def predicted_peak_bytes(self, batch_size: int) -> int:
        return round(self.large_peak_bytes + self.per_sample_bytes * (batch_size - self.large_batch))

    def basis(self) -> str:
        used = "peak" if self.peak_per_sample_bytes > self.categories_per_sample_bytes else "input + activations"
        return (f"from b={self.small_batch},{self.large_batch}: input + activations "
                f"+{self.categories_per_sample_bytes / 2**20:.3f} MiB/sample, peak "
                f"+{self.peak_per_sample_bytes / 2**20:.3f} MiB/sample; {used} used")  # fmt: skip


def _growing_bytes(c: MemoryByCategory) -> int | None:
    if c.input_bytes is None or c.activations_bytes is None:
        return None
    return c.input_bytes + c.activations_bytes


def fit_growth(measured: Sequence[MemoryByCategory]) -> MemoryGrowth | None:
    """The growth from the two smallest distinct batch sizes among ``measured`` that have the growing categories
    and a peak; None with fewer than two."""
    usable: dict[int, MemoryByCategory] = {}
    for c in measured:
        if c.batch_size is not None and c.peak_bytes is not None and _growing_bytes(c) is not None:
            usable.setdefault(c.batch_size, c)
    if len(usable) < 2:
        return None
    small, large = (usable[b] for b in sorted(usable)[:2])
    assert small.batch_size is not None and large.batch_size is not None
    assert small.peak_bytes is not None and large.peak_bytes is not None
    samples = large.batch_size - small.batch_size
    categories = (_growing_bytes(large) - _growing_bytes(small)) / samples  # type: ignore[operator]
    peak = (large.peak_bytes - small.peak_bytes) / samples
    return MemoryGrowth(small.batch_size, large.batch_size, categories, peak, large.peak_bytes)
