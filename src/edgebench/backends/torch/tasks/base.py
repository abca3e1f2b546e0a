"""What every torch training task shares: the session protocol, what a session is made from, the optimizer,
building the model."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Protocol

import torch
import torch.nn.functional as F
from torch import nn

from edgebench.workloads.lm import LMSettings
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


@dataclass(frozen=True)
class SessionInputs:
    """What every task's session is made from, declared once: :func:`~edgebench.backends.torch.tasks.task_session`
    fills it from the caller's settings and each task's :meth:`Task.session` reads what it needs."""

    batch_size: int
    input_shape: tuple[int, ...]
    num_classes: int
    #: Where the model and its batch live (``cpu``, ``cuda:0``; ``meta`` when only counting FLOPs).
    device: str
    #: Seeds the model's initialization and the synthetic batch.
    seed: int
    #: A real dataset to train on (one of the task's ``datasets``, checked before the session is made); None: a
    #: synthetic batch, generated once.
    data: str | None = None
    #: A language model's fine-tuning and generation settings (None: the defaults; other tasks ignore it).
    lm: LMSettings | None = None

    def generator(self) -> torch.Generator:
        """A fresh random generator at the seed, for the synthetic batch (the model's initialization has its own)."""
        return torch.Generator().manual_seed(self.seed)


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


class TokenSession(LossSession):
    """A session whose loss is the cross-entropy at every position of its labels (the token tasks: language
    modelling, masked language modelling, sequence to sequence); inference is the same forward pass, no gradients."""

    def forward(self) -> torch.Tensor:
        """The model on this step's inputs: logits ``(..., classes)``, one row per position of :meth:`labels`."""
        raise NotImplementedError

    def labels(self) -> torch.Tensor:
        """The class at every position the loss scores."""
        raise NotImplementedError

    def loss(self) -> torch.Tensor:
        logits = self.forward()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), self.labels().reshape(-1))

    @torch.no_grad()
    def infer_step(self) -> None:
        self.forward()


class Task:
    """Turns a workload into sessions; ``datasets`` names the real datasets its step can train on."""

    def __init__(self, workload: Workload) -> None:
        self.workload = workload

    def session(self, inputs: SessionInputs) -> TrainingSession:
        """The workload's model, optimizer and batch on ``inputs.device``, ready to step."""
        raise NotImplementedError

    def build(self, inputs: SessionInputs) -> nn.Module:
        """The workload's model at ``inputs``' shape and classes, initialized from its seed."""
        torch.manual_seed(inputs.seed)
        return build_model(self.workload, inputs.num_classes, inputs.input_shape, inputs.device)

    @property
    def datasets(self) -> tuple[str, ...]:
        """Declared once, framework-free, in :data:`edgebench.workloads.tasks.TASKS` (trial validation reads it)."""
        return task_datasets(self.workload.task)

    def check_data(self, data: str | None) -> None:
        from edgebench.workloads.tasks import TASKS

        spec = TASKS.get(self.workload.task)
        if data is not None and spec is not None and spec.text_files and data not in self.datasets:
            return  # a text file's path (checked where the trial was made)
        if data is not None and data not in self.datasets:
            accepted = ", ".join(self.datasets) or "none"
            raise ValueError(f"{self.workload.name} cannot train on {data!r} (its task takes: {accepted})")
