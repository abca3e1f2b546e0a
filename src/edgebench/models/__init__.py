"""Model definitions, one file per family; each file registers its workloads in ``edgebench.registry.MODELS``.

The project defines its own models because torchvision does not import beside the CPU build of torch.
"""

from __future__ import annotations

from edgebench.models.workload import Workload
from edgebench.registry import MODELS


def get_workload(name: str) -> Workload:
    """The workload registered as ``name`` (aliases accepted); ``UnknownName`` lists the valid names.

    A ``module:attr`` name is the user's own model (see :mod:`edgebench.models.custom`).
    """
    if ":" in name:
        from edgebench.models.custom import custom_workload

        return custom_workload(name)
    return MODELS.load(name)
