"""The partition cost table: each unit's time on the device and on the server, and its device energy.

Device times come from a stored layer-traced trial (``edgebench run --trace layers``): each module's own forward
(and, for training, backward) time per step, split over its calls in the pass.  A container's own time (the
residual add, the concat) goes to the units hosting its ops (:class:`~edgebench.graph.layer_graph.ContainerShare`).
The traced forward ran with autograd recording; for inference the forward times are scaled so they add up to the
trial's measured inference latency, and the table says so.  In training the step's remaining time (loss,
optimizer, framework: the layer table's ``other`` row) is split over the units by their parameters, since the
optimizer's work follows the weights each side holds.

Server times are either the device's divided by a speed-up the user gives (labelled ``--cloud-speedup``) or the
same figures from a traced trial of the same model on another device (``--cloud-trial``).

A configuration never traced on the device can be analysed from *predicted* per-module times
(:func:`build_predicted_table`, ``edgebench partition --predicted``): the table's ``basis`` is then
``predicted``, and every view labels the device's figures (and server times derived from them) so.

Device energy is above idle (DNNTune's ``T * (P_active - P_idle)``): each module's measured power where the trial
had a power sensor, else the trial's labelled utilization estimate (``--estimate-energy``), else unknown, and
then energy cannot be ranked.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from edgebench.graph.layer_graph import GraphTensor, LayerGraph
from edgebench.measure.layers import LayerReport, LayerRow
from edgebench.records.result import TrialResult

Mode = Literal["infer", "train"]
#: Where the device's per-unit times come from: a traced trial, or the predictor's per-layer cost models.
Basis = Literal["measured", "predicted"]

#: Bytes per element of the dtypes a crossing tensor can be compressed to (``--transfer-dtype``).
TRANSFER_DTYPES = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}


def transfer_bytes(tensor: GraphTensor, transfer_dtype: str | None = None) -> int:
    """Bytes on the wire: the tensor's own dtype, or floating tensors compressed to ``transfer_dtype``.

    Integer tensors (token ids, labels, an int8 model's activations) keep their size: compressing them loses
    information the server needs.
    """
    if transfer_dtype is None or not tensor.floating:
        return tensor.nbytes
    return tensor.numel * min(TRANSFER_DTYPES[transfer_dtype], tensor.itemsize_bytes)


@dataclass(frozen=True)
class UnitCost:
    name: str
    type: str
    mobile_ms: float
    cloud_ms: float
    #: Device energy above idle for this unit; None when the device's energy is unknown.
    mobile_energy_j: float | None


@dataclass(frozen=True)
class CostTable:
    model: str
    batch_size: int
    mode: Mode
    units: tuple[UnitCost, ...]
    tensors: tuple[GraphTensor, ...]
    label_bytes: int
    #: Where each column came from, shown with the table.
    mobile_source: str
    cloud_source: str
    energy_source: str | None
    notes: tuple[str, ...] = ()
    basis: Basis = "measured"
    #: With ``basis`` predicted: whether the server times are derived from the predicted device times.
    cloud_predicted: bool = False


@dataclass(frozen=True)
class SideTimes:
    """Per-unit times on one side, and the power figures of the trial they came from."""

    ms: tuple[float, ...]
    #: Per unit, the measured power (W) of the modules its time came from; None without a power sensor.
    power_w: tuple[float | None, ...]
    scale: float


def unit_times(graph: LayerGraph, report: LayerReport, result: TrialResult, mode: Mode) -> SideTimes:
    """Each unit's time per pass (ms) from a layer report of the same model."""
    ms, energy_w_ms = own_unit_times(graph, {r.name: r for r in report.rows}, report.other, mode)
    scale = 1.0
    traced = sum(ms)
    if mode == "infer" and result.latency.infer_ms is not None and traced > 0:
        scale = (result.latency.infer_ms.median or result.latency.infer_ms.mean) / traced
    power = tuple(e / m if e is not None and m > 0 else None for e, m in zip(energy_w_ms, ms, strict=True))
    return SideTimes(tuple(m * scale for m in ms), power, scale)


def own_unit_times(
    graph: LayerGraph, rows: dict[str, LayerRow], other: LayerRow, mode: Mode
) -> tuple[list[float], list[float | None]]:
    """Per unit: its modules' own time per pass (ms), and the watt-milliseconds of it (None without power).

    ``rows`` are the modules' own times by name (a layer report's rows, or predicted ones); ``other`` is the
    step outside every module, split over the units by parameters in training.
    """
    calls = Counter(u.module for u in graph.units)

    def own_ms(row: LayerRow | None) -> float:
        if row is None:
            return 0.0
        return row.forward_ms + (row.backward_ms if mode == "train" else 0.0)

    n = len(graph.units)
    ms = [0.0] * n
    #: Per unit, watt-milliseconds of the work charged to it (None once any part of it has no measured power).
    energy_w_ms: list[float | None] = [0.0] * n

    def charge(unit: int, extra_ms: float, row: LayerRow | None) -> None:
        ms[unit] += extra_ms
        done, power = energy_w_ms[unit], None if row is None else row.power_w
        energy_w_ms[unit] = None if done is None or (power is None and extra_ms > 0) else done + (power or 0) * extra_ms

    for i, u in enumerate(graph.units):
        charge(i, own_ms(rows.get(u.module)) / calls[u.module], rows.get(u.module))
    for share in graph.shares:
        charge(share.unit, own_ms(rows.get(share.module)) * share.weight, rows.get(share.module))
    if mode == "train" and n:
        params = [u.params for u in graph.units]
        total = sum(params)
        weights = [p / total for p in params] if total else [0.0] * (n - 1) + [1.0]
        for i, w in enumerate(weights):
            charge(i, other.total_ms * w, other)
    return ms, energy_w_ms


def build_predicted_table(
    graph: LayerGraph,
    mode: Mode,
    rows: dict[str, LayerRow],
    other: LayerRow,
    *,
    source: str,
    cloud_speedup: float | None = None,
    cloud: tuple[TrialResult, LayerReport] | None = None,
    notes: tuple[str, ...] = (),
) -> CostTable:
    """The cost table of ``graph`` from *predicted* per-module device times (``rows``, ``other``), labelled so.

    Energy is not predicted here (the predictor's energy is per step, not per module above idle): the table has
    none, and ranking by energy is refused.  Server times come from a speed-up of the predicted device times
    (themselves predicted, and labelled so) or from a measured server trial.
    """
    ms, _ = own_unit_times(graph, rows, other, mode)
    if cloud is not None:
        c_result, c_report = cloud
        cloud_ms = unit_times(graph, c_report, c_result, mode).ms
        cloud_source = (
            f"trial {c_result.trial_id} ({c_result.device.hostname or '?'}, batch {c_result.trial.batch_size}): "
            "measured"
        )
    elif cloud_speedup is not None:
        cloud_ms = tuple(m / cloud_speedup for m in ms)
        cloud_source = (
            f"--cloud-speedup {cloud_speedup:g}: each layer {cloud_speedup:g}x faster than the device's "
            "PREDICTED time (so predicted too)"
        )
    else:
        raise ValueError("server times need a speed-up or a server trial")
    units = tuple(UnitCost(u.name, u.type, m, c, None) for u, m, c in zip(graph.units, ms, cloud_ms, strict=True))
    return CostTable(
        model=graph.model,
        batch_size=graph.batch_size,
        mode=mode,
        units=units,
        tensors=graph.tensors,
        label_bytes=graph.label_bytes,
        mobile_source=f"PREDICTED: {source}",
        cloud_source=cloud_source,
        energy_source=None,
        notes=(*notes, "device energy is not predicted per layer: rank by latency"),
        basis="predicted",
        cloud_predicted=cloud is None,
    )


def build_table(
    graph: LayerGraph,
    mode: Mode,
    mobile: tuple[TrialResult, LayerReport],
    *,
    cloud_speedup: float | None = None,
    cloud: tuple[TrialResult, LayerReport] | None = None,
) -> CostTable:
    """The cost table of ``graph``: device times from ``mobile``, server times from a speed-up or ``cloud``."""
    result, report = mobile
    side = unit_times(graph, report, result, mode)
    notes: list[str] = []
    what = "forward" if mode == "infer" else "forward + backward + a share of loss/optimizer by parameters"
    mobile_source = (
        f"trial {result.trial_id} ({result.device.hostname or '?'}, batch {result.trial.batch_size}): {what}"
    )
    if mode == "infer" and side.scale != 1.0:
        mobile_source += f", scaled x{side.scale:.2f} to its measured inference latency"
    if cloud is not None:
        c_result, c_report = cloud
        c_side = unit_times(graph, c_report, c_result, mode)
        cloud_ms = c_side.ms
        cloud_source = (
            f"trial {c_result.trial_id} ({c_result.device.hostname or '?'}, batch {c_result.trial.batch_size})"
        )
        if c_result.trial.batch_size != result.trial.batch_size:
            notes.append(
                f"the server trial ran at batch {c_result.trial.batch_size}, the device's at {result.trial.batch_size}"
            )
    elif cloud_speedup is not None:
        cloud_ms = tuple(m / cloud_speedup for m in side.ms)
        cloud_source = f"--cloud-speedup {cloud_speedup:g}: each layer {cloud_speedup:g}x faster than on the device"
    else:
        raise ValueError("server times need a speed-up or a server trial")
    energies, energy_source = _energies(result, side)
    if energy_source is None:
        notes.append(
            "energy cannot be ranked: the trial had no power sensor and no estimate "
            "(run with --estimate-energy idle=..W,max=..W for a labelled estimate)"
        )
    units = tuple(
        UnitCost(u.name, u.type, m, c, e) for u, m, c, e in zip(graph.units, side.ms, cloud_ms, energies, strict=True)
    )
    return CostTable(
        model=graph.model,
        batch_size=graph.batch_size,
        mode=mode,
        units=units,
        tensors=graph.tensors,
        label_bytes=graph.label_bytes,
        mobile_source=mobile_source,
        cloud_source=cloud_source,
        energy_source=energy_source,
        notes=tuple(notes),
    )


def _energies(result: TrialResult, side: SideTimes) -> tuple[tuple[float | None, ...], str | None]:
    """Per-unit device energy above idle and where it came from (measured first); all None when unknown."""
    n = len(side.ms)
    if result.energy.source:
        idle = result.energy.idle_power_w or 0.0
        fallback = result.energy.avg_power_w
        out: list[float | None] = []
        for ms, p in zip(side.ms, side.power_w, strict=True):
            watts = p if p is not None else fallback
            out.append(None if watts is None else max(watts - idle, 0.0) * ms / 1e3)
        if all(e is not None for e in out):
            above = f", above idle {idle:.2f} W" if result.energy.idle_power_w is not None else " (no idle baseline)"
            return tuple(out), f"measured: {result.energy.source}{above}"
    estimate = result.estimated_energy
    if estimate is not None and estimate.avg_power_w is not None:
        watts = estimate.avg_power_w - (estimate.idle_power_w or 0.0)
        source = f"{estimate.source} ({watts:.2f} W above idle, the trial's mean)"
        return tuple(max(watts, 0.0) * ms / 1e3 for ms in side.ms), source
    return (None,) * n, None
