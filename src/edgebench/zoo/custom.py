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

This module turns the target into a :class:`~edgebench.workloads.spec.Workload` where the user's input enters
(:mod:`edgebench.config.trial`); it imports the user's module and nothing of a framework itself.  The training step
it names (``task="custom"``) is the torch backend's, :mod:`edgebench.backends.torch.tasks.custom`.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from typing import Any

from edgebench.registry import import_target
from edgebench.workloads import check_named
from edgebench.workloads.spec import Workload

DEFAULT_INPUT_SHAPE = (3, 224, 224)
DEFAULT_NUM_CLASSES = 1000


def resolve(target: str) -> Any:
    """Import ``target``, which the user must have named (:func:`edgebench.workloads.check_named`: data never
    becomes code); any failure becomes one ``ValueError`` line saying what went wrong."""
    check_named(target)
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
