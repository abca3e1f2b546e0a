"""The torch task's data sampler, replayed in the MNN worker from the epoch orders the preparing child wrote.

:class:`edgebench.backends.torch.data.batches.EpochSampler` draws ``batch_size`` indices at a time from a shuffled
epoch, drops the short remainder and shuffles again (``torch.randperm`` on the trial's seeded generator).  The
worker imports no torch, so the child writes the orders (:func:`edgebench.backends.mnn.prepare.epoch_orders`) and
this class walks them the same way: step ``k`` of an MNN trial trains on the batch step ``k`` of the torch trial
does.
"""

from __future__ import annotations

import numpy as np


class ReplayedSampler:
    """Indices of ``batch_size`` samples at a time, from prepared epoch orders (``(epochs, samples)``)."""

    def __init__(self, orders: np.ndarray, batch_size: int) -> None:
        if batch_size > orders.shape[1]:
            raise ValueError(f"batch size {batch_size} is larger than the {orders.shape[1]} training samples")
        self.orders, self.batch_size = orders, batch_size
        self.n = orders.shape[1]
        self.epochs = 0
        self._at = 0

    def next(self) -> np.ndarray:
        if self._at + self.batch_size > self.n:  # the short remainder is dropped, as the torch sampler does
            if self.epochs + 1 >= len(self.orders):
                raise RuntimeError(
                    f"the MNN trial ran past the {len(self.orders)} epoch orders prepared for it; set --max-steps "
                    "to bound the steps"
                )
            self.epochs += 1
            self._at = 0
        batch = np.asarray(self.orders[self.epochs, self._at : self._at + self.batch_size], dtype=np.int64)
        self._at += self.batch_size
        return batch
