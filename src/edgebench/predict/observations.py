"""What the predictor learns from and predicts on: one configuration's layers with their static features.

A :class:`Graph` is a model at a batch size as the layer tracer labels it: per label its type, its own FLOPs and
bytes forward and backward, and its calls per step; plus the step's costs outside every module (loss, optimizer
update) and the parameter count.  A stored traced trial adds what was measured (:class:`Observation`): each
label's exclusive forward and backward time per step (the worker's CPU time: :func:`cpu_share`), and the rest
of the step (``overhead_ms``: loss, optimizer update, framework), with energy and peak memory where the device
had them.  The same :class:`Graph` comes from a trial's stored span table or from counting the model on this
host (:func:`graph_of_config`), so a configuration never run is described exactly as the stored ones are.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from edgebench.errors import UsageError
from edgebench.measure.attribution import N_KINDS, clip, table_segments, time_by_key, train_windows
from edgebench.records.spans import BACKWARD, FORWARD, SpanTable

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult
    from edgebench.store.trials import StoredTrial


@dataclass(frozen=True)
class Config:
    """What a prediction is asked for: the trial settings that change the cost."""

    model: str
    batch_size: int
    mode: str = "train"
    threads: int = 1
    #: The clock the cores ran at (kHz), where known; None = not known (treated as the stored trials' clock).
    freq_khz: float | None = None
    preset: str | None = None
    input_shape: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Graph:
    config: Config
    types: tuple[str, ...]
    #: ``[label, 2]`` arrays: column 0 forward, column 1 backward (zeros for an inference pass).
    flops: np.ndarray
    bytes: np.ndarray
    calls: np.ndarray
    #: Bytes and FLOPs outside every module (the loss; the optimizer update in training).
    unattributed_bytes: float
    params: int
    #: FLOPs outside every module (a loss, a target network's forward under ``no_grad``).
    unattributed_flops: float = 0.0
    #: Each label's module path as the layer tracer names it (``features.3.conv``).
    names: tuple[str, ...] = ()
    #: Per label, the kernel the framework dispatches its convolution to (``Mkldnn``, ``Slow2d``; "" for other
    #: modules or where not known): the same layer runs several times slower on one than on another.
    kernels: tuple[str, ...] = ()
    #: Element count of every parameter tensor (empty where not known): the optimizer update's traffic and
    #: dispatches per tensor.
    param_numels: tuple[int, ...] = ()
    #: Per label, the rows (channels) of one sample's input (empty where not known): a per-channel kernel's cost
    #: per plane (:func:`edgebench.graph.static.rows_per_sample`).
    rows: tuple[int, ...] = ()

    @property
    def total_flops(self) -> float:
        return float(self.flops.sum())

    @property
    def kinds(self) -> tuple[str, ...]:
        """Each label's cost-model key: its type, and its kernel where known (``Conv2d/Slow2d``)."""
        if not self.kernels:
            return self.types
        return tuple(f"{t}/{k}" if k else t for t, k in zip(self.types, self.kernels, strict=True))


@dataclass(frozen=True)
class Observation:
    """A stored traced trial: its graph and what it measured, per step."""

    trial_id: str
    graph: Graph
    #: ``[label, 2]``: exclusive forward and backward time per step (ms).
    layer_ms: np.ndarray
    step_ms: float
    overhead_ms: float
    energy_j: float | None = None
    peak_bytes: int | None = None
    #: Share of the trial's cores other processes used while it ran (%; None where not sampled): a busy
    #: trial's steps measure the other processes too.
    busy_pct: float | None = None
    #: The measured steps' mean wall time, before the CPU-share correction (``step_ms`` is after it).
    wall_step_ms: float | None = None
    #: The worker's share of its core over the measured steps (1 = had it to itself); None = not corrected.
    cpu_share: float | None = None
    notes: list[str] = field(default_factory=list)
    #: The device the trial ran on, by its identity (host and sensor source; ``DeviceEnvironment.identity``).
    device: str | None = None


def _pair(costs: dict[str, np.ndarray], what: str) -> np.ndarray:
    return np.stack([np.asarray(costs[f"forward_{what}"]), np.asarray(costs[f"backward_{what}"])], axis=1)


def config_of(result: TrialResult) -> Config:
    trial = result.trial
    freqs = [f for f in (result.cpu.freq_khz or []) if f]
    freq = trial.freq_khz or (float(np.mean(freqs)) if freqs else None)
    return Config(
        model=trial.model,
        batch_size=trial.batch_size,
        mode=trial.mode,
        threads=trial.threads or 1,
        freq_khz=freq,
        preset=trial.preset,
        input_shape=tuple(result.workload.input_shape) if result.workload.input_shape else trial.input_shape,
    )


def cpu_share(result: TrialResult) -> float | None:
    """The share of a core a one-thread trial's worker had over its measured steps (its CPU time / wall time).

    Why: on a shared device other processes take turns on the worker's core, and every step, layer and the rest
    of it stretch by the same factor; the worker's own CPU time per step is what the work cost.  Times are
    scaled by this share, so a trial measured while others held half the core counts the time it ran, not the
    time it waited.  Only for one-thread trials: with several threads the CPU time also counts the threads'
    parallel work, and a quiet trial's share is not known.  None where the trial's CPU time was not sampled
    (a trial shorter than the sampler's period) or it ran several threads: its wall time is used as it is.
    """
    if (result.trial.threads or 1) != 1 or not result.cpu.process_pct:
        return None
    return min(result.cpu.process_pct / 100.0, 1.0)


def observation(result: TrialResult, spans: SpanTable, events: object) -> Observation:
    """The measured per-label times of a layer-traced trial, with its stored costs as features."""
    if spans.granularity != "layers" or spans.costs is None:
        raise ValueError(f"trial {result.trial_id} has no layer costs (record it with --trace layers)")
    windows = train_windows(events)  # type: ignore[arg-type]
    share = cpu_share(result)
    if not windows:
        raise ValueError(f"trial {result.trial_id} has no measured steps")
    steps = len(windows)
    wall_ms = sum(b - a for a, b in windows) / steps / 1e6
    n = len(spans.names)
    times = time_by_key(clip(table_segments(spans), windows), n * N_KINDS).reshape(n, N_KINDS) / steps / 1e6
    times = times * (share or 1.0)
    step_ms = wall_ms * (share or 1.0)
    layer_ms = times[:, [FORWARD, BACKWARD]]
    called = spans.label[spans.kind != BACKWARD]
    calls = np.bincount(called, minlength=n).astype(float) / steps
    unattributed = spans.notes.get("unattributed_costs") or {}
    graph = Graph(
        config=config_of(result),
        types=spans.types,
        flops=_pair(spans.costs, "flops"),
        bytes=_pair(spans.costs, "bytes"),
        calls=calls,
        unattributed_bytes=float(unattributed.get("forward_bytes", 0.0) + unattributed.get("backward_bytes", 0.0)),
        params=int(result.workload.params or 0),
        unattributed_flops=float(unattributed.get("forward_flops", 0.0) + unattributed.get("backward_flops", 0.0)),
        names=tuple(spans.names),
    )
    energy = result.energy.per_step_j
    return Observation(
        trial_id=result.trial_id,
        graph=graph,
        layer_ms=layer_ms,
        step_ms=step_ms,
        overhead_ms=max(step_ms - float(times.sum()), 0.0),
        energy_j=float(energy) if energy is not None else None,
        peak_bytes=result.memory.peak_bytes,
        busy_pct=result.hygiene.other_cpu_pct if result.hygiene is not None else None,
        wall_step_ms=wall_ms,
        cpu_share=share,
        device=result.device.identity,
    )


def observation_of(stored: StoredTrial) -> Observation:
    if stored.spans is None:
        raise ValueError(f"trial {stored.result.trial_id} has no spans")
    return observation(stored.result, stored.spans, stored.events)


#: The largest synthetic input batch a prediction builds on this host (its layers are counted at that batch): past
#: it, predicting is refused in one line rather than allocating terabytes (batch 10**9 of LeNet asked for 3.1 TB).
MAX_PREDICTED_INPUT_BYTES = 1 << 30


def check_batch(config: Config) -> None:
    """Refuse (one line naming ``--batch-size``) a configuration whose input batch this host cannot build."""
    from math import prod

    from edgebench.workloads import get_workload

    workload = get_workload(config.model)
    preset = workload.preset(config.preset) if config.preset else None
    shape = config.input_shape or (preset.input_shape if preset else workload.input_shape)
    per_sample = 4 * prod(shape)  # fp32 elements
    if config.batch_size * per_sample > MAX_PREDICTED_INPUT_BYTES:
        most = max(MAX_PREDICTED_INPUT_BYTES // per_sample, 1)
        raise UsageError(
            "--batch-size",
            f"{config.batch_size} samples of {config.model} ({'x'.join(map(str, shape))}) would take "
            f"{config.batch_size * per_sample / 2**30:.3g} GiB to lay out here; predict at most {most}",
        )


def graph_of_config(config: Config) -> Graph:
    """Count the configuration's per-layer features on this host (torch; nothing is timed)."""
    from edgebench.graph.static import graph_costs

    check_batch(config)

    counted = graph_costs(
        config.model,
        config.batch_size,
        mode=config.mode,
        preset=config.preset,
        input_shape=config.input_shape,
        threads=config.threads,
    )
    return Graph(
        config=replace(config, input_shape=config.input_shape or counted.input_shape),  # as a stored trial has it
        types=counted.types,
        flops=_pair(counted.costs, "flops"),
        bytes=_pair(counted.costs, "bytes"),
        calls=counted.calls,
        unattributed_bytes=counted.unattributed["forward_bytes"] + counted.unattributed["backward_bytes"],
        params=counted.params,
        unattributed_flops=counted.unattributed["forward_flops"] + counted.unattributed["backward_flops"],
        names=counted.names,
        kernels=counted.kernels,
        param_numels=counted.param_numels,
        rows=counted.rows,
    )


def with_plan(obs: Observation) -> Observation:
    """``obs`` with its configuration's conv kernels, input rows and parameter sizes, which a trial's record does
    not hold.

    Why recomputed, not stored: both follow from the model, batch, input and thread count alone
    (:func:`edgebench.graph.static.kernel_plan` builds the model and runs one forward pass), so
    trials recorded before they were counted are described exactly as a new configuration is.  A model the
    workloads do not know, or whose labels differ from the trace's, is returned as it is (a note says so).
    """
    cfg = obs.graph.config
    try:
        plan = _plan(cfg.model, cfg.batch_size, cfg.threads, cfg.preset, cfg.input_shape)
    except Exception as exc:  # any failure to build the model leaves the trial as recorded
        return replace(obs, notes=[*obs.notes, f"{cfg.model}: conv kernels not known ({exc})"])
    if plan.names != obs.graph.names:
        return replace(obs, notes=[*obs.notes, f"{cfg.model}: conv kernels not known (labels differ from the trace)"])
    graph = replace(obs.graph, kernels=plan.kernels, param_numels=plan.param_numels, rows=plan.rows)
    return replace(obs, graph=graph)


@lru_cache(maxsize=256)
def _plan(model: str, batch: int, threads: int, preset: str | None, shape: tuple[int, ...] | None):  # type: ignore[no-untyped-def]
    from edgebench.graph.static import kernel_plan

    return kernel_plan(model, batch, threads=threads, preset=preset, input_shape=shape)
