"""The per-layer table of a traced trial: time, share of the step, CPU, energy, FLOPs and roofline per layer.

Every figure is a mean per measured step.  Times are *exclusive*: a container's row holds only its own work
(a residual add, the time between its children), so the rows and ``other`` add up to the step.  ``other`` is
the step time outside every span: loss, optimizer, ``zero_grad`` and framework overhead.  CPU utilization and
energy come from splitting each sampling interval over the layers active in it (:mod:`edgebench.measure.
attribution`); utilization is the worker's own CPU time as a share of the cores the trial ran on (the cores' total
would count every other process's load as the layer's).  Energy is on the trial's own basis: above the
idle baseline (each row's time at the idle power taken off) where the trial measured one, so the rows and
``other`` add up to the trial's ``energy.per_step_j``; gross only where there was no baseline, and labelled so.
With ``depth``, modules below that depth are folded into their ancestor at it (``--depth 1`` on mobilenet_v2 gives
``features`` and ``classifier``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import Field, model_serializer

from edgebench.measure.attribution import (
    N_KINDS,
    PowerSeries,
    Segments,
    clip,
    split,
    table_segments,
    time_by_key,
    train_windows,
    window_total,
)
from edgebench.measure.roofline import roofline_point
from edgebench.records.events import EventsLike
from edgebench.records.model import Record
from edgebench.records.spans import BACKWARD, FORWARD, OPTIMIZER, SpanTable
from edgebench.sensors.samples import Samples


class LayerRow(Record):
    name: str
    type: str
    depth: int
    calls_per_step: float
    forward_ms: float
    backward_ms: float
    optimizer_ms: float
    total_ms: float
    share_pct: float
    #: The worker's own CPU time while this row's work ran, as a share of the trial's cores (other processes'
    #: load on them is not the layer's); None without the worker's sampled CPU time.
    cpu_util_pct: float | None = None
    #: The worker's CPU time during this row's work, per step (core-milliseconds).
    cpu_ms: float | None = None
    #: Per step; None where the device has no power sensor (never estimated here).
    energy_j: float | None = None
    power_w: float | None = None
    forward_flops: float | None = None
    backward_flops: float | None = None
    flops: float | None = None
    bytes: float | None = None
    achieved_gflops: float | None = None
    achieved_gbps: float | None = None
    peak_pct: float | None = None
    intensity_flop_per_byte: float | None = None
    attainable_gflops: float | None = None
    bound: str | None = None
    roof_pct: float | None = None
    #: ``--counters``: each perf event's count per step over this row's spans (a parent's row includes its
    #: children's: the counts are read at the span's two ends); None without counters.
    counters: dict[str, float] | None = None

    @model_serializer(mode="wrap")
    def _without_absent_counters(self, handler: Any) -> Any:
        """A trial that counted nothing renders as before ``--counters`` existed (no ``counters: null`` key)."""
        data = handler(self)
        if isinstance(data, dict) and data.get("counters") is None:
            data.pop("counters", None)
        return data

    @property
    def cache_miss_pct(self) -> float | None:
        """cache-misses / cache-references (DNNTune's LLC miss ratio), where both were counted."""
        c = self.counters or {}
        refs, misses = c.get("cache-references"), c.get("cache-misses")
        return 100.0 * misses / refs if refs and misses is not None else None


class PeakSummary(Record):
    key: str
    gemm_gflops: float
    copy_gbps: float
    measured_at: str
    #: Why the ceilings may be the device's load, not the device (measured busy); None where measured quiet.
    busy: str | None = None


class KindRow(Record):
    """A transformer's time by kind of layer (attention, MLP, norm, embedding), each kind with everything inside it
    (an attention block's projections are attention); ``rest`` is every layer outside the four (the output layer,
    the blocks' own residual adds)."""

    kind: str
    forward_ms: float
    backward_ms: float
    total_ms: float
    share_pct: float


class LayerReport(Record):
    trial_id: str
    model: str
    batch_size: int
    granularity: str
    steps: int
    step_ms: float
    depth: int | None
    cores: list[int]
    rows: list[LayerRow]
    other: LayerRow
    peak: PeakSummary | None = None
    power_source: str | None = None
    #: Per step, on ``energy_basis``: the rows and ``other`` add up to it.
    step_energy_j: float | None = None
    #: ``above idle`` (the idle power below taken off every row, as the trial's energy is) or ``gross``.
    energy_basis: str | None = None
    idle_power_w: float | None = None
    gross_step_energy_j: float | None = None
    notes: list[str] = Field(default_factory=list)
    #: A transformer's time by kind of layer (None for a model with no attention or MLP blocks).
    kinds: list[KindRow] | None = None


def group_labels(spans: SpanTable, depth: int | None) -> np.ndarray:
    """For each label, the label its figures are reported under (itself, or its ancestor at ``depth``)."""
    depths = spans.depth
    out = np.arange(len(spans.names))
    if depth is None:
        return out
    for label in range(len(spans.names)):
        g = label
        while depths[g] > depth:
            g = spans.parents[g]
        out[label] = g
    return out


def _fold(per_key: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-key (label x kind) figures summed into ``[group, kind]``."""
    per_label_kind = per_key.reshape(-1, N_KINDS)
    out = np.zeros((n_groups, N_KINDS))
    np.add.at(out, groups, per_label_kind)
    return out


def _worker_cpu_s(samples: Samples) -> tuple[np.ndarray, np.ndarray] | None:
    """The worker's cumulative CPU time (s) at the samples that read it (``/proc/<pid>/stat``'s user + system
    ticks): the worker's own, not the cores' total, which counts every other process on them."""
    columns = samples.columns
    if "proc_utime_ticks" not in columns or "proc_stime_ticks" not in columns or samples.meta is None:
        return None
    ticks = columns["proc_utime_ticks"] + columns["proc_stime_ticks"]
    read = ~np.isnan(ticks)
    if read.sum() < 2:
        return None
    return samples.t_ns[read], ticks[read] / samples.meta.clk_tck


def layer_report(
    result: Any,
    spans: SpanTable,
    events: EventsLike,
    samples: Samples | None,
    *,
    power: PowerSeries | None = None,
    peak: dict[str, Any] | None = None,
    depth: int | None = None,
) -> LayerReport:
    """Build the table for a stored trial (``result`` is its :class:`~edgebench.records.result.TrialResult`)."""
    windows = train_windows(events)
    if not windows:
        raise ValueError("the trial has no measured steps")
    steps = len(windows)
    step_ns = sum(b - a for a, b in windows) / steps
    n_labels = len(spans.names)
    n_keys = n_labels * N_KINDS
    segments: Segments = clip(table_segments(spans), windows)
    groups = group_labels(spans, depth)
    group_ids = sorted(set(groups.tolist()))
    times = _fold(time_by_key(segments, n_keys), groups, n_labels)  # ns over all steps
    # A call is a forward span of the label itself (layers: backward spans are runs, not calls), or any op span.
    called = spans.label if spans.granularity == "ops" else spans.label[spans.kind != BACKWARD]
    calls = np.bincount(called, minlength=n_labels)
    cores = list(result.trial.cores or [])
    notes: list[str] = []

    util = other_util = None
    worker = _worker_cpu_s(samples) if samples is not None else None
    n_cores = len(cores) or 1
    if worker is not None:
        t, cpu = worker
        used_s = _fold(split(segments, n_keys, t, cpu), groups, n_labels).sum(axis=1)
        row_s = times.sum(axis=1) / 1e9
        with np.errstate(invalid="ignore", divide="ignore"):
            util = np.clip(np.where(row_s > 0, 100.0 * used_s / (row_s * n_cores), np.nan), 0.0, 100.0)
        other_used_s = window_total(windows, t, cpu) - used_s.sum()
        other_s = (step_ns * steps - times.sum()) / 1e9
        other_util = min(max(100.0 * other_used_s / (other_s * n_cores), 0.0), 100.0) if other_s > 0 else None
        notes.append(
            "CPU per layer: the worker's own CPU time (its /proc/<pid>/stat, sampled every "
            f"{_read_period_ms(t):.0f} ms) spread over the layers by the time each ran in a sampling interval, as a "
            "share of its cores; other processes' load is not a layer's"
        )
    else:
        notes.append("no samples of the worker's CPU time: CPU utilization per layer is not available")

    energy = other_energy = step_energy = gross_step = basis = idle_w = None
    if power is not None:
        cumulative = power.cumulative_j()
        energy = _fold(split(segments, n_keys, power.t_ns, cumulative), groups, n_labels).sum(axis=1) / steps
        gross_step = window_total(windows, power.t_ns, cumulative) / steps
        idle_w = idle_power_of(result, power.channel)
        basis = "gross" if idle_w is None else "above idle"
        row_s = times.sum(axis=1) / steps / 1e9
        energy = energy - (idle_w or 0.0) * row_s
        step_energy = gross_step - (idle_w or 0.0) * step_ns / 1e9
        other_energy = step_energy - energy.sum()
        if idle_w is None:
            notes.append("no idle baseline for this trial: layer energies are gross (idle power included)")
    else:
        notes.append("no power sensor on this device: energy per layer is not available")

    costs = spans.costs
    gemm = peak["gemm_gflops"] if peak else None
    copy = peak["copy_gbps"] if peak else None

    def costs_of(g: int) -> dict[str, float] | None:
        if costs is None:
            return None
        members = groups == g
        return {k: float(v[members].sum()) for k, v in costs.items()}

    def counters_of(g: int) -> dict[str, float] | None:
        if spans.counters is None:
            return None
        own = spans.label == g
        return {name: float(v[own].sum()) / steps for name, v in spans.counters.items()}

    rows: list[LayerRow] = []
    for g in group_ids:
        t_ms = times[g] / steps / 1e6
        total_ms = float(t_ms.sum())
        c = costs_of(g)
        if total_ms == 0 and not (c and c["forward_flops"] + c["backward_flops"] > 0):
            continue
        flops = c["forward_flops"] + c["backward_flops"] if c else None
        moved = c["forward_bytes"] + c["backward_bytes"] if c else None
        compute_s = float(t_ms[FORWARD] + t_ms[BACKWARD]) / 1e3
        point = roofline_point(flops, moved, compute_s, gemm, copy)
        e = float(energy[g]) if energy is not None else None
        rows.append(
            LayerRow(
                name=spans.names[g],
                type=spans.types[g],
                depth=spans.depth[g],
                calls_per_step=float(calls[g]) / steps,
                forward_ms=float(t_ms[FORWARD]),
                backward_ms=float(t_ms[BACKWARD]),
                optimizer_ms=float(t_ms[OPTIMIZER]),
                total_ms=total_ms,
                share_pct=100.0 * total_ms * 1e6 / step_ns,
                cpu_util_pct=_finite(util[g]) if util is not None else None,
                cpu_ms=_core_ms(util[g], total_ms, cores) if util is not None else None,
                energy_j=e,
                power_w=e / (total_ms / 1e3) if e is not None and total_ms > 0 else None,
                forward_flops=c["forward_flops"] if c else None,
                backward_flops=c["backward_flops"] if c else None,
                flops=flops,
                bytes=moved,
                achieved_gflops=point.achieved_gflops,
                achieved_gbps=point.achieved_gbps,
                peak_pct=point.peak_pct,
                intensity_flop_per_byte=point.intensity_flop_per_byte,
                attainable_gflops=point.attainable_gflops,
                bound=point.bound,
                roof_pct=point.roof_pct,
                counters=counters_of(g),
            )
        )
    other_ms = (step_ns - times.sum() / steps) / 1e6
    other = LayerRow(
        name="(other: loss, optimizer, framework)" if spans.granularity == "layers" else "(outside any op)",
        type="",
        depth=0,
        calls_per_step=0.0,
        forward_ms=0.0,
        backward_ms=0.0,
        optimizer_ms=0.0,
        total_ms=other_ms,
        share_pct=100.0 * other_ms * 1e6 / step_ns,
        cpu_util_pct=_finite(other_util) if other_util is not None else None,
        cpu_ms=_core_ms(other_util, other_ms, cores) if other_util is not None else None,
        energy_j=other_energy,
        power_w=other_energy / (other_ms / 1e3) if other_energy is not None and other_ms > 0 else None,
    )
    if spans.granularity == "ops":
        notes.append("op times are self times (an op's children excluded); FLOPs are counted per layer only")
    if peak is None and costs is not None:
        notes.append("no measured peak for this device and placement: shares of peak are not available")
    if peak is not None and peak.get("busy"):
        notes.append(
            f"warning: the peak was measured on a busy device ({peak['busy']}): the shares of peak and every "
            "memory- or compute-bound label rest on a ceiling other load took down; `edgebench peak --refresh` on "
            "a quiet device"
        )
    if spans.counters is not None:
        notes.append(f"perf counters per step ({', '.join(spans.counters)}): read at each span's two ends, so a "
                     "parent's count includes its children's and the reads themselves")  # fmt: skip
    if costs is not None:
        notes.append("FLOPs: 2 per multiply-add of conv/matmul ops; bytes: tensor inputs + outputs per op (estimate)")
    return LayerReport(
        kinds=by_kind(rows, step_ns / 1e6) if depth is None else None,
        trial_id=result.trial_id,
        model=result.trial.model,
        batch_size=result.trial.batch_size,
        granularity=spans.granularity,
        steps=steps,
        step_ms=step_ns / 1e6,
        depth=depth,
        cores=cores,
        rows=rows,
        other=other,
        peak=PeakSummary(**{k: peak.get(k) for k in PeakSummary.model_fields}) if peak else None,
        power_source=power.source if power else None,
        step_energy_j=step_energy,
        energy_basis=basis,
        idle_power_w=idle_w,
        gross_step_energy_j=gross_step,
        notes=notes,
    )


def by_kind(rows: list[LayerRow], step_ms: float) -> list[KindRow] | None:
    """Each row's exclusive time summed under the kind of its nearest enclosing layer of a kind
    (:data:`edgebench.graph.modules.LAYER_KINDS`, by qualified name), the rest as ``rest``; None where no attention or
    MLP layer ran (not a transformer)."""
    from edgebench.workloads.layer_kinds import layer_kind

    kinds = {row.name: layer_kind(row.type) for row in rows}
    if not {"attention", "mlp"} & set(kinds.values()):
        return None
    totals: dict[str, list[float]] = {}
    for row in rows:
        kind, name = None, row.name
        while kind is None and name:
            kind = kinds.get(name)
            name = name.rpartition(".")[0]
        slot = totals.setdefault(kind or "rest", [0.0, 0.0])
        slot[0] += row.forward_ms
        slot[1] += row.backward_ms
    order = ["embedding", "attention", "mlp", "norm", "rest"]
    return [
        KindRow(kind=k, forward_ms=f, backward_ms=b, total_ms=f + b, share_pct=100.0 * (f + b) / step_ms)
        for k in order
        if k in totals
        for f, b in [totals[k]]
    ]


def idle_power_of(result: Any, channel: str | None) -> float | None:
    """The idle power the trial subtracted from ``channel`` (None: the device total it measured energy on)."""
    energy = result.energy
    if channel is None:
        return energy.idle_power_w
    rail = (energy.by_rail or {}).get(channel)
    return rail.idle_power_w if rail is not None else None


def _read_period_ms(t_ns: np.ndarray) -> float:
    """The median time between two readings (ms)."""
    return float(np.median(np.diff(t_ns))) / 1e6 if len(t_ns) > 1 else 0.0


def _core_ms(util_pct: float, ms: float, cores: list[int]) -> float | None:
    value = _finite(util_pct)
    return None if value is None else value / 100.0 * ms * (len(cores) or 1)


def _finite(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)
