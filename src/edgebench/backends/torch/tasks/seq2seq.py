"""Sequence to sequence (translation): teacher forcing, cross-entropy over every target position.

The input shape is ``(source_len, target_len)``; the decoder reads the target shifted right by one token.
"""

from __future__ import annotations

import torch

from edgebench.backends.torch.data.synthetic import token_batch
from edgebench.backends.torch.tasks.base import SessionInputs, Task, TokenSession


class Seq2SeqSession(TokenSession):
    """Inference is one teacher-forced scoring pass (what a decoder step costs, summed over the target)."""

    def __init__(self, model: torch.nn.Module, task: Task, src: torch.Tensor, tgt: torch.Tensor) -> None:
        super().__init__(model, task.workload.optimizer)
        self.src, self.tgt_in, self.tgt_out = src, tgt[:, :-1], tgt[:, 1:]

    def forward(self) -> torch.Tensor:
        return self.model(self.src, self.tgt_in)  # type: ignore[no-any-return]

    def labels(self) -> torch.Tensor:
        return self.tgt_out


class Seq2SeqTask(Task):
    def session(self, inputs: SessionInputs) -> Seq2SeqSession:
        shape, classes = inputs.input_shape, inputs.num_classes
        if len(shape) != 2:
            raise ValueError(f"a sequence-to-sequence input is (source_len, target_len), not {shape}")
        model, generator = self.build(inputs), inputs.generator()
        src = token_batch(inputs.batch_size, (shape[0],), classes, generator)
        tgt = token_batch(inputs.batch_size, (shape[1] + 1,), classes, generator)
        return Seq2SeqSession(model, self, src.to(inputs.device), tgt.to(inputs.device))
