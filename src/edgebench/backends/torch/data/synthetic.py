"""Synthetic batches: generated once per trial so that data generation never lands inside a timed step."""

from __future__ import annotations

import torch


def classification_batch(
    batch_size: int, input_shape: tuple[int, ...], num_classes: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Standard-normal inputs of ``(batch_size, *input_shape)`` and uniform labels in ``[0, num_classes)``."""
    inputs = torch.randn((batch_size, *input_shape), generator=generator)
    targets = torch.randint(0, num_classes, (batch_size,), generator=generator)
    return inputs, targets


def token_batch(
    batch_size: int, shape: tuple[int, ...], vocab: int, generator: torch.Generator, low: int = 0
) -> torch.Tensor:
    """Uniform token ids in ``[low, vocab)`` of ``(batch_size, *shape)``."""
    return torch.randint(low, vocab, (batch_size, *shape), generator=generator)
