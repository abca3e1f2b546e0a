"""One partition analysis: every frontier point, the choice, the baselines, the DAG's cut and a bandwidth sweep.

This is the ``--json`` contract of ``edgebench partition`` and what the table and the plot draw.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from edgebench.partition.costs import CostTable
from edgebench.partition.network import NetworkProfile
from edgebench.partition.solver import Objective, PointCost, best_point, dag_best_cut, frontier_points
from edgebench.partition.sweep import SweepSegment, sweep_bandwidth
from edgebench.records.model import Record


class DagCutSummary(Record):
    model_config = ConfigDict(frozen=True)

    #: The minimum s-t cut's cost (``kind`` ``dag-cut`` when it is not a prefix of the execution order).
    cut: PointCost
    #: Units it runs on the device, by name.
    device_units: list[str]
    frontier_misses: bool
    #: How much better than the best frontier, in ms (latency) or J (energy).
    gain: float


class PartitionAnalysis(Record):
    model_config = ConfigDict(frozen=True)

    model: str
    batch_size: int
    mode: str
    objective: Objective
    network: NetworkProfile
    transfer_dtype: str | None
    mobile_source: str
    cloud_source: str
    energy_source: str | None
    rows: list[PointCost]
    best: PointCost
    mobile_only: PointCost
    cloud_only: PointCost
    #: Points whose cut crosses one tensor, and those inside a branch (two or more cross).
    single_tensor_points: int
    branch_points: int
    dag_cut: DagCutSummary
    sweep: list[SweepSegment] | None = None
    notes: list[str] = Field(default_factory=list)
    #: ``predicted`` when the device's times come from ``edgebench predict``'s cost models, not a traced trial:
    #: every device figure (and the totals, and server times derived from the device's) is then predicted.
    device_basis: str = "measured"
    #: Whether the server times are predicted too (a speed-up of predicted device times).
    cloud_predicted: bool = False


def analyze(
    table: CostTable,
    network: NetworkProfile,
    objective: Objective,
    *,
    transfer_dtype: str | None = None,
    sweep_mbps: tuple[float, float] | None = None,
    points: list[int] | None = None,
) -> PartitionAnalysis:
    """Rank every point of ``table`` (or ``points`` of it) on ``network``; objective energy needs the device's."""
    rows = frontier_points(table, network, transfer_dtype=transfer_dtype, points=points)
    best = best_point(rows, objective)
    dag = dag_best_cut(table, network, objective, best, transfer_dtype=transfer_dtype)
    inner = rows[1:-1]
    notes = list(table.notes)
    branch = sum(1 for r in inner if r.tensors > 1)
    if branch:
        notes.append(
            f"{branch} of {len(inner)} split points cut inside a branch (a residual or concat block): "
            "every live tensor crossing them is sent, so they transfer more"
        )
    sweep = sweep_bandwidth(rows, network, objective, *sweep_mbps) if sweep_mbps else None
    return PartitionAnalysis(
        model=table.model,
        batch_size=table.batch_size,
        mode=table.mode,
        objective=objective,
        network=network,
        transfer_dtype=transfer_dtype,
        mobile_source=table.mobile_source,
        cloud_source=table.cloud_source,
        energy_source=table.energy_source,
        rows=rows,
        best=best,
        mobile_only=rows[-1],
        cloud_only=rows[0],
        single_tensor_points=len(inner) - branch,
        branch_points=branch,
        dag_cut=DagCutSummary(
            cut=dag.cost,
            device_units=[u.name for u, d in zip(table.units, dag.on_device, strict=True) if d],
            frontier_misses=dag.frontier_misses,
            gain=dag.gain,
        ),
        sweep=sweep,
        notes=notes,
        device_basis=table.basis,
        cloud_predicted=table.cloud_predicted,
    )
