"""A workload as plain data: what to train, on which inputs, with which optimizer, and its published figures.

Nothing here imports a framework, so validating a trial, planning a sweep or listing workloads costs no torch
import.  The model is a lazy ``"module:function"`` string that the backend resolves when it builds a session,
and the task is a name (:data:`edgebench.workloads.tasks.TASKS`) each backend maps to its own training step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from edgebench.registry import BACKENDS, import_target

#: ``(num_classes, input_shape) -> model``; input_shape excludes the batch dimension.
ModelFactory = Callable[[int, tuple[int, ...]], Any]


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
    #: ``"module:function"`` of the :data:`ModelFactory` (imported only when a model is built), or, for a user's
    #: own workload declared in Python (``--model mypkg:WORKLOAD``), the factory itself.
    model: str | ModelFactory
    input_shape: tuple[int, ...]
    num_classes: int
    optimizer: OptimizerSettings = field(default_factory=OptimizerSettings)
    #: The training step of the domain, a key of :data:`edgebench.workloads.tasks.TASKS`.
    task: str = "classification"
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

    def build_model(self, num_classes: int, input_shape: tuple[int, ...]) -> Any:
        """The model itself (the framework's module), imported from :attr:`model` only now."""
        factory = import_target(self.model) if isinstance(self.model, str) else self.model
        return factory(num_classes, tuple(input_shape))

    def session(
        self,
        batch_size: int,
        *,
        input_shape: tuple[int, ...] | None = None,
        num_classes: int | None = None,
        device: str = "cpu",
        seed: int = 0,
        data: str | None = None,
        backend: str = "torch",
        lm: Any = None,
    ) -> Any:
        """The backend's model, optimizer and batch on ``device``, ready to step (tests and scripts use it).

        Without ``data`` the batch is synthetic and generated once; with it (``mnist``, ``shakespeare``) each
        step draws the next batch of that real dataset and the session can ``evaluate()`` on held-out data.
        ``lm`` (a :class:`~edgebench.workloads.lm.LMSettings`) sets a language model's fine-tuning and generation.
        """
        return BACKENDS.load(backend).task_session(
            self,
            batch_size,
            input_shape=tuple(input_shape or self.input_shape),
            num_classes=num_classes or self.num_classes,
            device=device,
            seed=seed,
            data=data,
            **({"lm": lm} if lm is not None else {}),
        )
