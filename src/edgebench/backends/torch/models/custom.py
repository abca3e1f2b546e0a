"""Bring your own model: ``--model mypkg.mymodule:factory``.

The target is imported (the current directory and ``PYTHONPATH`` are searched) and may be:

* a :class:`~edgebench.workloads.spec.Workload`: used as it is (its own task, presets and references);
* a callable (a function or an ``nn.Module`` class) returning an ``nn.Module``: trained as a classifier, with
  cross-entropy on synthetic inputs of ``input_shape`` and labels below ``num_classes``;
* a callable returning ``(module, loss_fn)``: each step computes ``loss_fn(module, inputs, targets)`` (a scalar
  tensor) on the same synthetic batch, then backward and the optimizer step, so any objective can be timed.

The factory is called with ``num_classes=`` and ``input_shape=`` when its signature takes them.  The input is
``--input-shape`` / ``--num-classes`` if given, else the factory's ``input_shape`` / ``num_classes`` attributes,
else 3x224x224 and 1000 classes.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from edgebench.backends.torch.data.synthetic import classification_batch
from edgebench.backends.torch.tasks.base import LossSession, SessionInputs, Task, on_device
from edgebench.registry import import_target
from edgebench.workloads.spec import Workload

DEFAULT_INPUT_SHAPE = (3, 224, 224)
DEFAULT_NUM_CLASSES = 1000

LossFn = Callable[[nn.Module, torch.Tensor, torch.Tensor], torch.Tensor]


def is_custom(name: str) -> bool:
    """A ``module:attr`` target rather than a registered name."""
    return ":" in name


def resolve(target: str) -> Any:
    """Import ``target``; any failure becomes one ``ValueError`` line saying what went wrong."""
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise ValueError(f"{target!r} is not module:attribute (e.g. mypkg.models:build)")
    # As under `python -m` (the worker): the `edgebench` script's own sys.path[0] is its bin folder, not here.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj = import_target(target)
    except Exception as exc:  # an import error, an error inside the user's module, a missing attribute
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ValueError(f"cannot import {target!r}: {type(exc).__name__}: {detail}") from None
    if not isinstance(obj, Workload) and not callable(obj):
        raise ValueError(f"{target!r} is a {type(obj).__name__}, not a Workload or a callable returning an nn.Module")
    return obj


def _call(factory: Callable[..., Any], num_classes: int, input_shape: tuple[int, ...]) -> Any:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    offered = {"num_classes": num_classes, "input_shape": input_shape}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return factory(**{k: v for k, v in offered.items() if k in params or takes_any})


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


def custom_workload(target: str) -> Workload:
    """The workload for ``module:attr``; ``ValueError`` (one line) when it cannot be imported or used."""
    obj = resolve(target)
    if isinstance(obj, Workload):
        return obj
    return Workload(
        name=target,
        domain="custom",
        description=f"user model {target}",
        model=lambda num_classes, shape: _call(obj, num_classes, shape),
        input_shape=tuple(getattr(obj, "input_shape", DEFAULT_INPUT_SHAPE)),
        num_classes=int(getattr(obj, "num_classes", DEFAULT_NUM_CLASSES)),
        task="custom",
    )
