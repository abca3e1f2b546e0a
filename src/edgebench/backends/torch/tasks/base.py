"""What every torch training task shares: the session protocol, the optimizer, building the model."""

from __future__ import annotations

import contextlib
from typing import Protocol

import torch
from torch import nn

from edgebench.workloads.spec import OptimizerSettings, Workload
from edgebench.workloads.tasks import task_datasets


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
    """SGD with momentum and weight decay (or the workload's Adam/RMSprop), plus the ``inv`` lr policy if used."""
    optimizer: torch.optim.Optimizer
    common = {"lr": settings.lr, "weight_decay": settings.weight_decay}
    if settings.kind == "sgd":
        optimizer = torch.optim.SGD(params, momentum=settings.momentum, **common)  # type: ignore[arg-type]
    elif settings.kind == "rmsprop":
        optimizer = torch.optim.RMSprop(params, momentum=settings.momentum, eps=settings.eps, **common)  # type: ignore[arg-type]
    else:
        adam = torch.optim.Adam if settings.kind == "adam" else torch.optim.AdamW
        optimizer = adam(params, betas=settings.betas, eps=settings.eps, **common)  # type: ignore[arg-type]
    if settings.schedule == "constant":
        return optimizer, None
    gamma, power = settings.gamma, settings.power
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: (1.0 + gamma * step) ** -power)
    return optimizer, scheduler


def on_device(device: str) -> contextlib.AbstractContextManager[object]:
    """Where to build modules: straight on the ``meta`` device when counting FLOPs (no memory, no init cost)."""
    return torch.device("meta") if device == "meta" else contextlib.nullcontext()


def build_model(workload: Workload, num_classes: int, input_shape: tuple[int, ...], device: str) -> nn.Module:
    """The workload's model in train mode on ``device``."""
    with on_device(device):
        model = workload.build_model(num_classes, input_shape)
    return model.to(device).train()


class LossSession:
    """A session whose step is ``loss()``, backward, one optimizer step (and the lr schedule, if any)."""

    def __init__(self, model: nn.Module, settings: OptimizerSettings) -> None:
        self.model = model
        self.optimizer, self.scheduler = make_optimizer(model.parameters(), settings)

    def loss(self) -> torch.Tensor:
        raise NotImplementedError

    def train_step(self) -> torch.Tensor:
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss()
        loss.backward()
        self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        return loss.detach()


class Task:
    """Turns a workload into sessions; ``datasets`` names the real datasets its step can train on."""

    def __init__(self, workload: Workload) -> None:
        self.workload = workload

    def build(self, num_classes: int, input_shape: tuple[int, ...], device: str, seed: int) -> nn.Module:
        torch.manual_seed(seed)
        return build_model(self.workload, num_classes, input_shape, device)

    @property
    def datasets(self) -> tuple[str, ...]:
        """Declared once, framework-free, in :data:`edgebench.workloads.tasks.TASKS` (trial validation reads it)."""
        return task_datasets(self.workload.task)

    def check_data(self, data: str | None) -> None:
        if data is not None and data not in self.datasets:
            accepted = ", ".join(self.datasets) or "none"
            raise ValueError(f"{self.workload.name} cannot train on {data!r} (its task takes: {accepted})")
