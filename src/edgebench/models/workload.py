"""Old import path of the workload records (users' own ``Workload`` declarations import them from here)."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

__all__ = ["OptimizerSettings", "Preset", "Reference", "Workload"]
