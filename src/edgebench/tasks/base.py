"""What the worker needs from any training task, whatever its domain."""

from __future__ import annotations

from typing import Protocol

import torch
from torch import nn

from edgebench.models.workload import OptimizerSettings


class TrainingSession(Protocol):
    """A model with its optimizer and data, ready to take one training step at a time."""

    #: Every trainable module of the session (for parameter counts and layer tracing).
    model: nn.Module

    def train_step(self) -> torch.Tensor:
        """One full step (forward, loss, backward, optimizer update); returns the detached loss."""
        ...

    def infer_step(self) -> None:
        """One forward pass without gradients, as the deployed model would run."""
        ...


def make_optimizer(
    params: object, settings: OptimizerSettings
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler | None]:
    """SGD with momentum and weight decay, plus the ``inv`` learning-rate policy when the workload uses it."""
    optimizer = torch.optim.SGD(
        params,  # type: ignore[arg-type]
        lr=settings.lr,
        momentum=settings.momentum,
        weight_decay=settings.weight_decay,
    )
    if settings.schedule == "constant":
        return optimizer, None
    gamma, power = settings.gamma, settings.power
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: (1.0 + gamma * step) ** -power)
    return optimizer, scheduler
