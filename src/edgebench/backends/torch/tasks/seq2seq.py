"""Sequence to sequence (translation): teacher forcing, cross-entropy over every target position.

The input shape is ``(source_len, target_len)``; the decoder reads the target shifted right by one token.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from edgebench.backends.torch.data.synthetic import token_batch
from edgebench.backends.torch.tasks.base import LossSession, Task


class Seq2SeqSession(LossSession):
    def __init__(self, model: torch.nn.Module, task: Task, src: torch.Tensor, tgt: torch.Tensor) -> None:
        super().__init__(model, task.workload.optimizer)
        self.src, self.tgt_in, self.tgt_out = src, tgt[:, :-1], tgt[:, 1:]

    def loss(self) -> torch.Tensor:
        logits = self.model(self.src, self.tgt_in)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), self.tgt_out.reshape(-1))

    @torch.no_grad()
    def infer_step(self) -> None:
        """One teacher-forced scoring pass (what a decoder step costs, summed over the target)."""
        self.model(self.src, self.tgt_in)


class Seq2SeqTask(Task):
    def session(
        self, batch_size: int, *, input_shape: tuple[int, ...], num_classes: int, device: str, seed: int
    ) -> Seq2SeqSession:
        if len(input_shape) != 2:
            raise ValueError(f"a sequence-to-sequence input is (source_len, target_len), not {input_shape}")
        model = self.build(num_classes, input_shape, device, seed)
        generator = torch.Generator().manual_seed(seed)
        src = token_batch(batch_size, (input_shape[0],), num_classes, generator)
        tgt = token_batch(batch_size, (input_shape[1] + 1,), num_classes, generator)
        return Seq2SeqSession(model, self, src.to(device), tgt.to(device))
