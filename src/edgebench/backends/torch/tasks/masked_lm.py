"""Masked language modelling (BERT pre-training): predict 15% of the tokens from a corrupted sequence.

Of the chosen positions 80% become ``[MASK]``, 10% a random token and 10% stay, as Devlin et al. do; the loss is
the cross-entropy at the chosen positions only.
"""

from __future__ import annotations

import torch

from edgebench.backends.torch.data.synthetic import token_batch
from edgebench.backends.torch.tasks.base import SessionInputs, Task, TokenSession

MASK_ID = 103  # [MASK] in BERT's uncased WordPiece vocabulary


class MaskedLMSession(TokenSession):
    def __init__(
        self, model: torch.nn.Module, task: Task, tokens: torch.Tensor, positions: torch.Tensor, labels: torch.Tensor
    ) -> None:
        super().__init__(model, task.workload.optimizer)
        self.tokens, self.positions, self.originals = tokens, positions, labels

    def forward(self) -> torch.Tensor:
        return self.model(self.tokens, self.positions)  # type: ignore[no-any-return]

    def labels(self) -> torch.Tensor:
        return self.originals


def mask_tokens(
    tokens: torch.Tensor, vocab: int, generator: torch.Generator, rate: float = 0.15
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(corrupted tokens, chosen positions (batch, n), original tokens there)``; n is the same for every row."""
    batch, length = tokens.shape
    n = max(1, round(rate * length))
    positions = torch.rand(batch, length, generator=generator).argsort(dim=1)[:, :n].sort(dim=1).values
    labels = tokens.gather(1, positions)
    action = torch.rand(batch, n, generator=generator)
    replacement = torch.where(
        action < 0.8,
        torch.full_like(labels, MASK_ID % vocab),
        torch.where(action < 0.9, torch.randint(0, vocab, labels.shape, generator=generator), labels),
    )
    return tokens.scatter(1, positions, replacement), positions, labels


class MaskedLMTask(Task):
    def session(self, inputs: SessionInputs) -> MaskedLMSession:
        model, generator = self.build(inputs), inputs.generator()
        tokens = token_batch(inputs.batch_size, inputs.input_shape[:1], inputs.num_classes, generator)
        corrupted, positions, labels = (t.to(inputs.device) for t in mask_tokens(tokens, inputs.num_classes, generator))
        return MaskedLMSession(model, self, corrupted, positions, labels)
