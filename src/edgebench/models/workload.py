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
    """A published figure for a workload, with the configuration it holds for and where it was published.

    ``preset`` names the input preset the figure was published at (``None``: the workload's default input);
    ``excludes`` lists parameter-name prefixes the published count leaves out (a figure for one of two nets,
    or a graph that takes already-embedded inputs); ``rel_tol`` is how far a faithful definition may land from
    the figure: 1% for exact published counts, wider where the source rounds (``1.4M``) or says ``~``.
    """

    quantity: Literal["params", "forward_flops", "forward_macs"]
    value: float
    config: str
    source: str
    preset: str | None = None
    rel_tol: float = 0.01
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Preset:
    """A named input configuration: the per-sample input shape and the output classes (or vocabulary)."""

    name: str
    input_shape: tuple[int, ...]
    num_classes: int
    description: str = ""


@dataclass(frozen=True)
class OptimizerSettings:
    """SGD settings of the MNN-based suite: ``lr * (1 + gamma * step) ** -power`` ("inv"), or a constant lr.

    ``kind`` picks another optimiser where the model's own recipe uses one (Adam for transformers and GANs,
    RMSprop for DQN): its state tensors are part of the training memory a device must hold.
    """

    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 5e-4
    schedule: Literal["inv", "constant"] = "inv"
    gamma: float = 1e-4
    power: float = 0.75
    kind: Literal["sgd", "adam", "adamw", "rmsprop"] = "sgd"
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8


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
    #: Named inputs (``mnist``, ``cifar10``, ``imagenet``, a sequence length...); the default input is one of them.
    presets: tuple[Preset, ...] = ()

    def preset(self, name: str | None) -> Preset:
        """The preset called ``name`` (``None``: the default input); ``KeyError`` names the valid ones."""
        if name is None:
            return self.default_preset
        for preset in self.presets:
            if preset.name == name.strip().lower():
                return preset
        raise KeyError(f"{self.name} has no preset {name!r}; choose one of: {', '.join(self.preset_names())}")

    def preset_names(self) -> list[str]:
        return [p.name for p in self.presets]

    @property
    def default_preset(self) -> Preset:
        """The preset matching the default input, or an unnamed one (``default``) when none does."""
        for preset in self.presets:
            if preset.input_shape == tuple(self.input_shape) and preset.num_classes == self.num_classes:
                return preset
        return Preset("default", tuple(self.input_shape), self.num_classes)

    def session(
        self,
        batch_size: int,
        *,
        input_shape: tuple[int, ...] | None = None,
        num_classes: int | None = None,
        device: str = "cpu",
        seed: int = 0,
        data: str | None = None,
    ) -> TrainingSession:
        """Build the model, optimizer and a batch on ``device``, ready to step.

        Without ``data`` the batch is synthetic and generated once; with it (``mnist``, ``shakespeare``) each
        step draws the next batch of that real dataset and the session can ``evaluate()`` on held-out data.
        """
        from edgebench.registry import import_target

        task = import_target(self.task)
        extra = {} if data is None else {"data": data}
        return task(self).session(
            batch_size,
            input_shape=tuple(input_shape or self.input_shape),
            num_classes=num_classes or self.num_classes,
            device=device,
            seed=seed,
            **extra,
        )
