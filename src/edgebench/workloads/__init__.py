"""Workloads as framework-free data: one file per model family declares its specs (:mod:`.spec`), registered in
``edgebench.registry.MODELS``; the backends build the models (``edgebench.backends.<name>.models``).

A ``module:attr`` model is the user's own code, and a store, a result folder or a shared file can hold one: data
never becomes code, so such a model is imported only once the user has named it in this command (``--model
mod:attr`` on its command line, a sweep file they run, or ``$EDGEBENCH_NAMED_MODELS`` set by hand as an explicit
trust setting).  :func:`name_model` records that; :func:`get_workload` refuses any other one in one line.
"""

from __future__ import annotations

import os

from edgebench.errors import UsageError
from edgebench.registry import CUSTOM_WORKLOAD, MODELS, import_target
from edgebench.workloads.spec import Workload

#: The ``module:attr`` models the user named (comma-separated).  An environment variable, so that the
#: processes a command starts for its trials (the worker, a converter) may import what the command's user named,
#: and a process that was never told (a read-only command over a shared store) imports none.
NAMED_MODELS_ENV = "EDGEBENCH_NAMED_MODELS"


class ModelNotNamed(UsageError):
    """A ``module:attr`` model that came from data (a stored trial, a file), not from the user: not imported."""

    def __init__(self, name: str) -> None:
        super().__init__(
            "--model",
            f"{name!r} is a module:attr model named by data (a stored trial, a file), not by you: edgebench imports "
            f"your own code only when you name it; add --model {name}",
        )
        self.name = name


def is_custom(name: str) -> bool:
    """A ``module:attr`` target (the user's own code) rather than a registered name."""
    return ":" in name


def named_models() -> frozenset[str]:
    return frozenset(filter(None, os.environ.get(NAMED_MODELS_ENV, "").split(",")))


def name_model(name: str) -> None:
    """The user named ``name`` in this command: it may be imported here and in the processes started from here.
    A registered name needs no naming (nothing of the user's is imported)."""
    if is_custom(name) and name not in named_models():
        os.environ[NAMED_MODELS_ENV] = ",".join(sorted(named_models() | {name}))


def check_named(name: str) -> None:
    """Raise :class:`ModelNotNamed` unless ``name`` is a registered model or one the user named."""
    if is_custom(name) and name not in named_models():
        raise ModelNotNamed(name)


def get_workload(name: str) -> Workload:
    """The workload registered as ``name`` (aliases accepted); ``UnknownName`` lists the valid names.

    A ``module:attr`` name is the user's own model (see :mod:`edgebench.zoo.custom`), which
    imports the user's module and so its framework: only one the user named (:class:`ModelNotNamed` otherwise).
    """
    if is_custom(name):
        check_named(name)
        return import_target(CUSTOM_WORKLOAD)(name)
    return MODELS.load(name)


def named_workload(name: str) -> Workload:
    """The workload of a name the user typed in this command (``--model``, ``models NAME``): named, then loaded."""
    name_model(name)
    return get_workload(name)
