"""Per-layer cost models learned from a device's traced trials, summed along a graph with the step's overhead.

Why these models: a device has a handful of traced trials, not nn-Meter's thousands of kernels, so each model is
a non-negative linear map from features with a physical reading, which extrapolates to bigger layers the way
compute does instead of flattening like a tree ensemble.  For each layer type (``Conv2d``, ``Linear``,
``BatchNorm2d``, ``InvertedResidual``...) and direction (forward, backward) apart:

``ms = (a * FLOPs + b * FLOPs/threads + c * bytes + d * bytes/threads + e * calls) * f_ref / f``

a compute term, a memory term and a per-call overhead, with threads and the clock ``f`` scaling them.  A type with
too few observations (fewer than two trials) falls back to the model of all layers of that direction, and the
share of a prediction made so is reported.  The untraced rest of a step (loss, optimizer update, framework) is
``ms = g + h * optimizer bytes + k * parameters`` (the optimizer update reads and writes every parameter, its
gradient and its state).  Every fit weighs a trial by 1/its step time, so small models count as much as big ones.

Energy per step is the predicted time times the stored trials' mean power (power x time, the power learned), and
peak memory ``= m + n * parameter bytes + o * forward bytes``: both only where the device's trials have them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from edgebench.predict.observations import Graph, Observation

#: A layer type needs this many trials holding it to get its own model.
MIN_TRIALS_PER_TYPE = 2
DIRECTIONS = ("forward", "backward")
POOLED = "(all layers)"


def _linear():  # type: ignore[no-untyped-def]
    from sklearn.linear_model import LinearRegression

    return LinearRegression(positive=True, fit_intercept=False)


def layer_features(graph: Graph, direction: int, ref_khz: float | None) -> np.ndarray:
    """``[label, 5]`` features of one direction (see the module docstring)."""
    threads = max(graph.config.threads, 1)
    flops = graph.flops[:, direction] / 1e9
    moved = graph.bytes[:, direction] / 1e9
    calls = graph.calls  # every forward call has its backward
    x = np.stack([flops, flops / threads, moved, moved / threads, calls / 1e3], axis=1)
    freq = graph.config.freq_khz
    if ref_khz and freq:
        x = x * (ref_khz / freq)
    return x


def overhead_features(graph: Graph) -> np.ndarray:
    return np.array([1.0, graph.unattributed_bytes / 1e9, graph.params / 1e6])


@dataclass
class Breakdown:
    """One configuration's predicted step, by part."""

    step_ms: float
    forward_ms: float
    backward_ms: float
    overhead_ms: float
    #: Share of the step predicted by the pooled model (layer types none of the stored trials had).
    unseen_share: float
    unseen_types: list[str] = field(default_factory=list)
    energy_j: float | None = None
    peak_bytes: float | None = None


@dataclass
class CostModel:
    ref_khz: float | None
    #: ``(type, direction) -> fitted regressor``; ``(POOLED, direction)`` for types without their own.
    layers: dict[tuple[str, int], object]
    overhead: object
    power_w: float | None
    memory: object | None
    trial_ids: list[str]

    def predict(self, graph: Graph) -> Breakdown:
        parts = [0.0, 0.0]
        unseen_ms = 0.0
        unseen: set[str] = set()
        types = np.asarray(graph.types)
        for d in (0, 1):
            x = layer_features(graph, d, self.ref_khz)
            active = (x[:, :4].sum(axis=1) > 0) | (x[:, 4] > 0)
            for kind in sorted(set(types[active].tolist())):
                rows = (types == kind) & active
                own = self.layers.get((kind, d))
                model = own or self.layers[(POOLED, d)]
                ms = float(np.clip(model.predict(x[rows]), 0.0, None).sum())  # type: ignore[attr-defined]
                parts[d] += ms
                if own is None and ms > 0:
                    unseen_ms += ms
                    unseen.add(kind)
        over = float(max(self.overhead.predict(overhead_features(graph)[None, :])[0], 0.0))  # type: ignore[attr-defined]
        step = parts[0] + parts[1] + over
        memory = None
        if self.memory is not None:
            memory = float(self.memory.predict(memory_features(graph)[None, :])[0])  # type: ignore[attr-defined]
        return Breakdown(
            step_ms=step,
            forward_ms=parts[0],
            backward_ms=parts[1],
            overhead_ms=over,
            unseen_share=unseen_ms / step if step > 0 else 0.0,
            unseen_types=sorted(unseen),
            energy_j=self.power_w * step / 1e3 if self.power_w is not None else None,
            peak_bytes=memory,
        )


def memory_features(graph: Graph) -> np.ndarray:
    return np.array([1.0, graph.params * 4 / 1e9, graph.bytes[:, 0].sum() / 1e9])


def fit(observations: list[Observation]) -> CostModel:
    """Learn the layer, overhead, power and memory models from ``observations`` (at least one)."""
    if not observations:
        raise ValueError("no traced trials to learn from")
    freqs = [o.graph.config.freq_khz for o in observations if o.graph.config.freq_khz]
    ref_khz = float(np.median(freqs)) if freqs else None
    layers: dict[tuple[str, int], object] = {}
    for d in (0, 1):
        xs, ys, ws, kinds, trial_of = [], [], [], [], []
        for i, obs in enumerate(observations):
            x = layer_features(obs.graph, d, ref_khz)
            y = obs.layer_ms[:, d]
            keep = (x.sum(axis=1) > 0) | (y > 0)
            xs.append(x[keep])
            ys.append(y[keep])
            ws.append(np.full(int(keep.sum()), 1.0 / max(obs.step_ms, 1e-6)))
            kinds += list(np.asarray(obs.graph.types)[keep])
            trial_of += [i] * int(keep.sum())
        if not kinds:
            continue
        x_all, y_all, w_all = np.concatenate(xs), np.concatenate(ys), np.concatenate(ws)
        k_all, t_all = np.asarray(kinds), np.asarray(trial_of)
        if y_all.sum() <= 0:
            continue
        layers[(POOLED, d)] = _linear().fit(x_all, y_all, sample_weight=w_all)
        for kind in sorted(set(kinds)):
            rows = k_all == kind
            if len(set(t_all[rows].tolist())) < MIN_TRIALS_PER_TYPE:
                continue
            ran = y_all[rows].sum() > 0  # a type that never took time (a container's own share): 0, learned
            layers[(kind, d)] = _linear().fit(x_all[rows], y_all[rows], sample_weight=w_all[rows]) if ran else _Zero()
    for d in (0, 1):  # an inference-only store has no backward: a model that predicts 0 for it
        layers.setdefault((POOLED, d), _Zero())
    x_o = np.stack([overhead_features(o.graph) for o in observations])
    y_o = np.array([o.overhead_ms for o in observations])
    w = np.array([1.0 / max(o.step_ms, 1e-6) for o in observations])
    overhead = _linear().fit(x_o, y_o, sample_weight=w)
    with_energy = [o for o in observations if o.energy_j is not None]
    power = (
        sum(o.energy_j for o in with_energy) / sum(o.step_ms / 1e3 for o in with_energy)  # type: ignore[misc]
        if with_energy
        else None
    )
    with_memory = [o for o in observations if o.peak_bytes]
    memory = None
    if len(with_memory) >= 2:
        memory = _linear().fit(
            np.stack([memory_features(o.graph) for o in with_memory]), np.array([o.peak_bytes for o in with_memory])
        )
    return CostModel(ref_khz, layers, overhead, power, memory, [o.trial_id for o in observations])


class _Zero:
    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.zeros(len(x))
