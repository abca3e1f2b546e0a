"""Workloads as framework-free data: one file per model family declares its specs (:mod:`.spec`), registered in
``edgebench.registry.MODELS``; the backends build the models (``edgebench.backends.<name>.models``).
"""

from __future__ import annotations

from edgebench.registry import CUSTOM_WORKLOAD, MODELS, import_target
from edgebench.workloads.spec import Workload


def get_workload(name: str) -> Workload:
    """The workload registered as ``name`` (aliases accepted); ``UnknownName`` lists the valid names.

    A ``module:attr`` name is the user's own model (see :mod:`edgebench.zoo.custom`), which
    imports the user's module and so its framework.
    """
    if ":" in name:
        return import_target(CUSTOM_WORKLOAD)(name)
    return MODELS.load(name)
