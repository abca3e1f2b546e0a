"""Old import path of :func:`edgebench.workloads.get_workload`; the specs live in :mod:`edgebench.workloads` and the
model definitions in each backend (``edgebench.backends.torch.models``)."""

from __future__ import annotations

from edgebench.workloads import get_workload

__all__ = ["get_workload"]
