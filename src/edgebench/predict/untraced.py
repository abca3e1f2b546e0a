"""From a traced step to an untraced one: the tracer's cost per module call, calibrated on the device's own pairs.

The predictor learns from layer-traced trials, so its step includes what the layer tracer adds: a wrapper per
module call in forward and a hook per autograd node in backward (``backends/torch/tracing/layers.py``), a cost
that grows with the module calls, not the work.  Where the store also holds an untraced trial of a traced
configuration (same model, batch size, threads and input; ``edgebench run`` without ``--trace``), the gap between
the two (each the worker's CPU time per step where sampled) over the traced step's module calls is the tracer's
cost per call on this device; the median over the pairs is taken, and an untraced step is predicted as the traced
prediction less that cost times the configuration's calls.  Without such a pair nothing is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgebench.predict.observations import Graph, Observation, cpu_share
from edgebench.predict.stored import Selection


@dataclass(frozen=True)
class HookCost:
    """The tracer's cost per module call (ms) and the traced/untraced pairs it was measured on."""

    per_call_ms: float
    pairs: int

    def untraced_ms(self, traced_ms: float, graph: Graph) -> float:
        """The untraced step of ``graph`` given its traced one (never below a tenth of it)."""
        return max(traced_ms - self.per_call_ms * float(graph.calls.sum()), 0.1 * traced_ms)


def _key(model: str, batch: int, threads: int, shape: tuple[int, ...] | None, preset: str | None) -> tuple[object, ...]:
    return (model, batch, threads, tuple(shape) if shape else None, preset)


def hook_cost(store_path: Path | None, selection: Selection, observations: list[Observation]) -> HookCost | None:
    """The tracer's cost per module call from the store's untraced trials of traced configurations; None without
    a pair."""
    from edgebench.store.sqlite import Store, default_store_path

    traced = {
        _key(c.model, c.batch_size, c.threads, c.input_shape, c.preset): o
        for o in observations
        for c in [o.graph.config]
    }
    gaps: list[float] = []
    with Store(store_path or default_store_path(), read_only=True) as store:
        for result in store.trials():
            trial = result.trial
            if not selection.holds(result, trace="none") or result.latency.step_ms is None:
                continue
            shape = tuple(result.workload.input_shape) if result.workload.input_shape else trial.input_shape
            obs = traced.get(_key(trial.model, trial.batch_size, trial.threads or 1, shape, trial.preset))
            calls = float(obs.graph.calls.sum()) if obs is not None else 0.0
            if obs is None or calls <= 0:
                continue
            untraced_ms = result.latency.step_ms.mean * (cpu_share(result) or 1.0)
            gaps.append((obs.step_ms - untraced_ms) / calls)
    if not gaps:
        return None
    return HookCost(per_call_ms=max(float(np.median(gaps)), 0.0), pairs=len(gaps))
