"""A workload: a model definition plus everything needed to train it the way its source system did."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from torch import nn

    from edgebench.tasks.base import TrainingSession


@dataclass(frozen=True)
class Reference:
    """A published figure for a workload, with the configuration it holds for and where it was published."""

    quantity: Literal["params", "forward_flops", "forward_macs"]
    value: float
    config: str
    source: str


@dataclass(frozen=True)
class OptimizerSettings:
    """SGD settings of the MNN-based suite: ``lr * (1 + gamma * step) ** -power`` ("inv"), or a constant lr."""

    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 5e-4
    schedule: Literal["inv", "constant"] = "inv"
    gamma: float = 1e-4
    power: float = 0.75


@dataclass(frozen=True)
class Workload:
    name: str
    domain: str
    description: str
    #: ``(num_classes, input_shape) -> nn.Module``; input_shape excludes the batch dimension.
    build_model: Callable[[int, tuple[int, ...]], nn.Module]
    input_shape: tuple[int, ...]
    num_classes: int
    optimizer: OptimizerSettings = field(default_factory=OptimizerSettings)
    #: ``"module:attr"`` of the task that builds a :class:`TrainingSession` (the training step of the domain).
    task: str = "edgebench.tasks.classification:ClassificationTask"
    references: tuple[Reference, ...] = ()

    def session(
        self,
        batch_size: int,
        *,
        input_shape: tuple[int, ...] | None = None,
        num_classes: int | None = None,
        device: str = "cpu",
        seed: int = 0,
    ) -> TrainingSession:
        """Build the model, optimizer and a synthetic batch on ``device``, ready to step."""
        from edgebench.registry import import_target

        task = import_target(self.task)
        return task(self).session(
            batch_size,
            input_shape=tuple(input_shape or self.input_shape),
            num_classes=num_classes or self.num_classes,
            device=device,
            seed=seed,
        )
