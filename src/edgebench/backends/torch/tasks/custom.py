"""The training step of a user's own ``module:factory`` model (:mod:`edgebench.zoo.custom` resolves the target).

The factory is the workload's ``build_model``: it returns an ``nn.Module``, trained as a classifier with
cross-entropy on a synthetic batch, or ``(module, loss_fn)``, each step computing ``loss_fn(module, inputs,
targets)`` on the same batch, then backward and the optimizer step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from edgebench.backends.torch.data.synthetic import classification_batch
from edgebench.backends.torch.tasks.base import LossSession, SessionInputs, Task, on_device

LossFn = Callable[[nn.Module, torch.Tensor, torch.Tensor], torch.Tensor]


def _split(built: Any, target: str) -> tuple[nn.Module, LossFn | None]:
    module, loss_fn = built if isinstance(built, tuple) and len(built) == 2 else (built, None)
    if not isinstance(module, nn.Module):
        raise TypeError(f"{target} returned {type(module).__name__}; it must return an nn.Module or (module, loss_fn)")
    if loss_fn is not None and not callable(loss_fn):
        raise TypeError(f"{target} returned a {type(loss_fn).__name__} as its loss; it must be callable")
    return module, loss_fn


class CustomSession(LossSession):
    def __init__(self, model: nn.Module, task: Task, inputs: torch.Tensor, targets: torch.Tensor, loss_fn: LossFn):
        super().__init__(model, task.workload.optimizer)
        self.inputs, self.targets, self.loss_fn = inputs, targets, loss_fn

    def loss(self) -> torch.Tensor:
        return self.loss_fn(self.model, self.inputs, self.targets)

    @torch.no_grad()
    def infer_step(self) -> None:
        self.model(self.inputs)


def _cross_entropy(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(model(inputs), targets)


class CustomTask(Task):
    """The user's module (and loss) on a synthetic batch; the factory is the workload's ``build_model``."""

    def session(self, inputs: SessionInputs) -> CustomSession:
        shape, classes, device = inputs.input_shape, inputs.num_classes, inputs.device
        torch.manual_seed(inputs.seed)
        with on_device(device):
            built = self.workload.build_model(classes, shape)
        model, loss_fn = _split(built, self.workload.name)
        model = model.to(device).train()
        images, targets = classification_batch(inputs.batch_size, shape, classes, inputs.generator())
        return CustomSession(model, self, images.to(device), targets.to(device), loss_fn or _cross_entropy)
