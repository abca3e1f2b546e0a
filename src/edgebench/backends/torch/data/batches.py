"""Drawing training batches from a dataset held in memory: shuffled epochs, reproducible from the trial's seed."""

from __future__ import annotations

import torch


class EpochSampler:
    """Indices of ``batch_size`` samples at a time; every sample once per epoch, in a new order each epoch."""

    def __init__(self, n: int, batch_size: int, generator: torch.Generator) -> None:
        if batch_size > n:
            raise ValueError(f"batch size {batch_size} is larger than the {n} training samples")
        self.n, self.batch_size, self.generator = n, batch_size, generator
        self._order = torch.randperm(n, generator=generator)
        self._at = 0
        self.epochs = 0

    def next(self) -> torch.Tensor:
        if self._at + self.batch_size > self.n:  # the short remainder is dropped, as drop_last does
            self._order, self._at = torch.randperm(self.n, generator=self.generator), 0
            self.epochs += 1
        batch = self._order[self._at : self._at + self.batch_size]
        self._at += self.batch_size
        return batch
