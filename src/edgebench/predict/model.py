"""Per-layer cost models learned from a device's traced trials, summed along a graph with the step's overhead.

Why these models: a device has a handful of traced trials, not nn-Meter's thousands of kernels, so each model is
a non-negative linear map from features with a physical reading, which extrapolates to bigger layers the way
compute does instead of flattening like a tree ensemble.  For each layer type (``Conv2d``, ``Linear``,
``BatchNorm2d``, ``InvertedResidual``...), a convolution's type with the kernel the framework dispatches it to
(``Conv2d/Slow2d``, ``Conv2d/Mkldnn``: PyTorch runs a one-thread 1x1 convolution at a batch under 16 on a native
path that ran 4-6x fewer FLOP/s here), and direction (forward, backward) apart:

``ms = (a*FLOPs + b*FLOPs/threads + c*bytes + d*bytes/threads + g*calls + p*input planes) * f_ref/f``

a compute term, a memory term, a per-call overhead and a per-plane cost (a per-channel kernel's loop over the
(sample, channel) planes of its input: :func:`input_planes`), with threads and the clock ``f`` scaling them.  A
type with too few observations (fewer than two trials) falls back to its family's model, then to all layers', and
the share of a prediction made so is reported.  The untraced rest of a step (loss, optimizer update, framework)
is ``ms = q * parameter tensors + i * update bytes in cached tensors + j * in streamed tensors + k * module calls
+ l * FLOPs outside``, with no fixed term (:func:`overhead_features`; the update reads and writes every parameter,
its gradient and its state, one tensor at a time: a tensor too big for the caches streams from DRAM).  Every fit
minimises relative errors (sums weighted by 1/their square), so small models count as much as big ones.

Energy per step is the predicted time times the stored trials' mean power (power x time, the power learned), and
peak memory ``= m + n * parameter bytes + o * forward bytes``: both only where the device's trials have them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from edgebench.predict.observations import Graph, Observation
from edgebench.workloads.layer_kinds import LAYER_KINDS

#: A layer type needs this many trials holding it to get its own model.
MIN_TRIALS_PER_TYPE = 2
DIRECTIONS = ("forward", "backward")
POOLED = "(all layers)"

#: Layer types by the kind of kernel they run: a type no stored trial had is predicted by its family's model
#: (ReLU6 by the activations', Conv1d by the convolutions'), and only a family no trial had by all layers'.
#: A type named nowhere here is a block of the model (``Fire``, ``Bottleneck``, a model's root, ``Sequential``):
#: its own time is the glue between its children (residual adds, concatenations, reshapes), memory-bound work.
FAMILIES: dict[str, tuple[str, ...]] = {
    "convolution": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"),
    "dense": ("Linear", "Bilinear", "LazyLinear", "MultiheadAttention", "LoRALinear", "FrozenInt8Linear"),
    "recurrent": ("LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"),
    "normalization": (
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "LayerNorm",
        "RMSNorm",
        "GroupNorm",
        "InstanceNorm1d",
        "InstanceNorm2d",
        "InstanceNorm3d",
        "LocalResponseNorm",
    ),
    "pooling": (
        "MaxPool1d",
        "MaxPool2d",
        "MaxPool3d",
        "AvgPool1d",
        "AvgPool2d",
        "AvgPool3d",
        "AdaptiveAvgPool1d",
        "AdaptiveAvgPool2d",
        "AdaptiveAvgPool3d",
        "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d",
    ),
    "elementwise": (
        "ReLU",
        "ReLU6",
        "LeakyReLU",
        "PReLU",
        "ELU",
        "SELU",
        "GELU",
        "SiLU",
        "Mish",
        "Hardswish",
        "Hardsigmoid",
        "Hardtanh",
        "Sigmoid",
        "Tanh",
        "Softmax",
        "LogSoftmax",
        "Dropout",
        "Dropout2d",
        "Dropout1d",
        "AlphaDropout",
        "Identity",
        "Flatten",
        "Unflatten",
    ),
    "embedding": LAYER_KINDS["embedding"],
    # a transformer's own layers (the zoo's decoder and encoder): an attention block's own time (rotary positions,
    # scaled dot-product attention, reshapes) and an MLP block's (the gate, the activation), apart from their
    # projections, which are ``Linear`` ("dense")
    # (torch's MultiheadAttention holds its projections' weights itself: it stays "dense")
    "attention": ("Attention",),
    "mlp": LAYER_KINDS["mlp"],
}
_FAMILY_OF = {kind: family for family, kinds in FAMILIES.items() for kind in kinds}
BLOCK = "block"


def family(kind: str) -> str:
    """The family whose model predicts ``kind`` when no stored trial had it (``block`` for a model's own);
    a kind with its kernel (``Conv2d/Slow2d``) is in its type's family."""
    return _FAMILY_OF.get(kind.split("/", 1)[0], BLOCK)


def family_key(kind: str) -> str:
    return f"({family(kind)})"


def _linear():  # type: ignore[no-untyped-def]
    from sklearn.linear_model import LinearRegression

    return LinearRegression(positive=True, fit_intercept=False)


#: Candidate working sets (bytes a parameter tensor's update ops move) above which the update's traffic is taken
#: to stream from DRAM rather than stay in the caches; :func:`select_update_bytes` picks one per device.
STREAM_CHOICES = (256 * 1024, 1024**2, 4 * 1024**2, 16 * 1024**2, float("inf"))


def layer_features(graph: Graph, direction: int, ref_khz: float | None) -> np.ndarray:
    """``[label, 6]`` features of one direction (see the module docstring): GFLOPs, GFLOPs/threads, GB moved,
    GB moved/threads, thousands of calls, millions of input planes (:func:`input_planes`).

    A layer's bytes are priced at one rate per type whatever the call's size: a streamed rate apart (calls over a
    working set chosen per device, as first written) was learned from the few models with big calls and priced
    DenseNet-40's batch norms, whose 5-20 MB calls ran at cache speed in this machine's 32 MiB L3, 3-5x too dear
    whenever DenseNet was the model held out.
    """
    threads = max(graph.config.threads, 1)
    flops = graph.flops[:, direction] / 1e9
    moved = graph.bytes[:, direction] / 1e9
    calls = graph.calls  # every forward call has its backward
    x = np.stack([flops, flops / threads, moved, moved / threads, calls / 1e3, input_planes(graph) / 1e6], axis=1)
    freq = graph.config.freq_khz
    if ref_khz and freq:
        x = x * (ref_khz / freq)
    return x


def input_planes(graph: Graph) -> np.ndarray:
    """Per label, the (sample, channel) planes its calls loop over per step: batch x rows per sample x calls
    (zeros where the rows are not known).

    Why a term of its own: a normalisation, pooling or per-channel kernel vectorises within a plane and pays a
    fixed cost per plane, so bytes alone price a network of many small maps (2x2 of 1024 channels) too cheap and
    one of few big maps (32x32 of 160 channels) too dear; on this machine a batch norm's backward cost about
    20 ns per plane besides its bytes.
    """
    if not graph.rows:
        return np.zeros(len(graph.types))
    return graph.config.batch_size * np.asarray(graph.rows, dtype=float) * graph.calls


#: Bytes one element-wise op of the optimizer update moves per parameter element (fp32 parameter, gradient and
#: momentum: three tensors of four bytes), compared with the streaming working set per tensor.
UPDATE_OP_BYTES_PER_ELEMENT = 12


def streamed_update_share(graph: Graph, stream_bytes: float) -> float:
    """The share of the parameters in tensors whose update ops move more than ``stream_bytes`` (0 where the
    parameter sizes are not known).

    Why per tensor: the update runs op by op on one tensor at a time (SGD with momentum: three element-wise
    ops on parameter, gradient and momentum); a tensor whose three fit the caches is read from DRAM once and
    hit in cache by the next ops, a bigger one is streamed from DRAM by every op.
    """
    numels = np.asarray(graph.param_numels, dtype=float)
    if numels.sum() <= 0:
        return 0.0
    return float(numels[numels * UPDATE_OP_BYTES_PER_ELEMENT > stream_bytes].sum() / numels.sum())


def overhead_features(graph: Graph, stream_bytes: float = float("inf")) -> np.ndarray:
    """``[fixed (only where the parameter tensors are not known), thousands of parameter tensors, GB the update
    and loss move in cached tensors, GB in streamed tensors, thousands of module calls, GFLOPs outside every
    module]``.

    The update reads and writes every parameter, its gradient and its state (bytes, cached or streamed by
    tensor size: :func:`streamed_update_share`) and dispatches its ops, and the autograd engine accumulates a
    gradient, once per parameter tensor (30-50 us per tensor here, the same from LeNet's 8 tensors to
    ShuffleNet's 170); the framework pays a dispatch per module outside every module's own time (calls); a loss
    or a target network run outside the model's modules computes (FLOPs).  No fixed term where the tensors are
    known: a fixed one learned from models whose rest of the step is 3-150 ms priced LeNet's 0.4 ms at 1.6.
    """
    share = streamed_update_share(graph, stream_bytes)
    moved = graph.unattributed_bytes / 1e9
    tensors = len(graph.param_numels)
    return np.array(
        [
            0.0 if tensors else 1.0,
            tensors / 1e3,
            moved * (1 - share),
            moved * share,
            graph.calls.sum() / 1e3,
            graph.unattributed_flops / 1e9,
        ]
    )


@dataclass
class Breakdown:
    """One configuration's predicted step, by part."""

    step_ms: float
    forward_ms: float
    backward_ms: float
    overhead_ms: float
    #: Share of the step predicted by a family's or all layers' model (types fewer than
    #: :data:`MIN_TRIALS_PER_TYPE` stored trials had).
    unseen_share: float
    unseen_types: list[str] = field(default_factory=list)
    energy_j: float | None = None
    peak_bytes: float | None = None


@dataclass
class CostModel:
    ref_khz: float | None
    #: The working set above which a parameter tensor's update ops count as streamed (:func:`select_update_bytes`).
    update_bytes: float
    #: ``(type, direction) -> fitted regressor``; ``("(family)", direction)`` and ``(POOLED, direction)`` for
    #: types without their own.
    layers: dict[tuple[str, int], object]
    overhead: object
    power_w: float | None
    memory: object | None
    trial_ids: list[str]

    def learned_by(self, kind: str) -> str:
        """Which model predicts ``kind``: ``own``, ``family`` (its family's) or ``all layers``."""
        if any((kind, d) in self.layers for d in (0, 1)):
            return "own"
        if any((family_key(kind), d) in self.layers for d in (0, 1)):
            return "family"
        return "all layers"

    def label_ms(self, graph: Graph) -> tuple[np.ndarray, list[str]]:
        """``[label, 2]`` predicted forward and backward ms of each label, and the types predicted by a family's
        or all layers' model (not their own)."""
        out = np.zeros((len(graph.types), 2))
        unseen: set[str] = set()
        types = np.asarray(graph.kinds)
        for d in (0, 1):
            x = layer_features(graph, d, self.ref_khz)
            active = x.sum(axis=1) > 0
            for kind in sorted(set(types[active].tolist())):
                rows = (types == kind) & active
                own = self.layers.get((kind, d))
                model = own or self.layers.get((family_key(kind), d)) or self.layers[(POOLED, d)]
                out[rows, d] = np.clip(model.predict(x[rows]), 0.0, None)  # type: ignore[attr-defined]
                if own is None and out[rows, d].sum() > 0:
                    unseen.add(kind)
        return out, sorted(unseen)

    def predict(self, graph: Graph) -> Breakdown:
        per_label, unseen = self.label_ms(graph)
        parts = per_label.sum(axis=0)
        unseen_ms = float(per_label[np.isin(np.asarray(graph.kinds), unseen)].sum())
        x_o = overhead_features(graph, self.update_bytes)[None, :]
        over = float(max(self.overhead.predict(x_o)[0], 0.0))  # type: ignore[attr-defined]
        step = float(parts[0] + parts[1]) + over
        memory = None
        if self.memory is not None:
            memory = float(self.memory.predict(memory_features(graph)[None, :])[0])  # type: ignore[attr-defined]
        return Breakdown(
            step_ms=step,
            forward_ms=float(parts[0]),
            backward_ms=float(parts[1]),
            overhead_ms=over,
            unseen_share=unseen_ms / step if step > 0 else 0.0,
            unseen_types=unseen,
            energy_j=self.power_w * step / 1e3 if self.power_w is not None else None,
            peak_bytes=memory,
        )


def memory_features(graph: Graph) -> np.ndarray:
    return np.array([1.0, graph.params * 4 / 1e9, graph.bytes[:, 0].sum() / 1e9])


def fit(observations: list[Observation], update_bytes: float | None = None) -> CostModel:
    """Learn the layer, overhead, power and memory models from ``observations`` (at least one); the update's
    streaming working set is selected from them (:func:`select_update_bytes`) unless given."""
    if not observations:
        raise ValueError("no traced trials to learn from")
    if update_bytes is None:
        update_bytes = select_update_bytes(observations)
    freqs = [o.graph.config.freq_khz for o in observations if o.graph.config.freq_khz]
    ref_khz = float(np.median(freqs)) if freqs else None
    layers = fit_layers(observations, ref_khz)
    overhead = fit_overhead(observations, update_bytes)
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
    return CostModel(ref_khz, update_bytes, layers, overhead, power, memory, [o.trial_id for o in observations])


def fit_layers(observations: list[Observation], ref_khz: float | None) -> dict[tuple[str, int], object]:
    """Per (type, direction), (family, direction) and (all layers, direction), a model of a layer's time."""
    layers: dict[tuple[str, int], object] = {}
    for d in (0, 1):
        xs, ys, kinds, trial_of = [], [], [], []
        for i, obs in enumerate(observations):
            x = layer_features(obs.graph, d, ref_khz)
            y = obs.layer_ms[:, d]
            keep = (x.sum(axis=1) > 0) | (y > 0)
            xs.append(x[keep])
            ys.append(y[keep])
            kinds += list(np.asarray(obs.graph.kinds)[keep])
            trial_of += [i] * int(keep.sum())
        if not kinds:
            continue
        x_all, y_all = np.concatenate(xs), np.concatenate(ys)
        k_all, t_all = np.asarray(kinds), np.asarray(trial_of)
        if y_all.sum() <= 0:
            continue
        layers[(POOLED, d)] = _fit_group(x_all, y_all, t_all)
        f_all = np.asarray([family_key(k) for k in kinds])
        for group, of in [(f, f_all) for f in sorted(set(f_all.tolist()))] + [(k, k_all) for k in sorted(set(kinds))]:
            rows = of == group
            if len(set(t_all[rows].tolist())) < MIN_TRIALS_PER_TYPE:
                continue
            ran = y_all[rows].sum() > 0  # a type that never took time (a container's own share): 0, learned
            layers[(group, d)] = _fit_group(x_all[rows], y_all[rows], t_all[rows]) if ran else _Zero()
    for d in (0, 1):  # an inference-only store has no backward: a model that predicts 0 for it
        layers.setdefault((POOLED, d), _Zero())
    return layers


def fit_overhead(observations: list[Observation], update_bytes: float) -> object:
    """The model of the rest of a step (:func:`overhead_features`), each trial weighted by 1/its step squared
    like the layers' sums: the fit minimises relative errors, a small model's rest of the step counts as much as
    a big one's (1/step, as first written, left the big models' update dominating it)."""
    x_o = np.stack([overhead_features(o.graph, update_bytes) for o in observations])
    y_o = np.array([o.overhead_ms for o in observations])
    w = np.array([1.0 / max(o.step_ms, 1e-6) ** 2 for o in observations])
    return _linear().fit(x_o, y_o, sample_weight=w)


def select_update_bytes(observations: list[Observation]) -> float:
    """The working set above which a parameter tensor's update is streamed on this device, chosen from
    :data:`STREAM_CHOICES` by leave-one-model-out over ``observations`` alone: the choice of the smallest mean
    |error| of the rest of the step (relative to the step) over the held-out models.

    Why chosen, not fixed: where traffic stops fitting the caches depends on the device's cache sizes, which the
    records do not hold; why from these trials only: a model being validated is not among them, so its error
    does not choose the split it is judged with; why by the rest of the step alone: its model depends on nothing
    else (a choice in seconds, not minutes); why the mean, not the median: over a dozen held-out models the median
    is flat between choices, and the choice flipped when one model was left out.  Fewer than three models: no
    split (all traffic alike).
    """
    models = sorted({o.graph.config.model for o in observations})
    if len(models) < 3:
        return float("inf")
    folds = [
        (
            [o for o in observations if o.graph.config.model != held],
            [o for o in observations if o.graph.config.model == held],
        )
        for held in models
    ]

    def error(choice: float) -> float:
        errors = []
        for train, test in folds:
            model = fit_overhead(train, choice)
            x = np.stack([overhead_features(o.graph, choice) for o in test])
            predicted = np.clip(model.predict(x), 0.0, None)  # type: ignore[attr-defined]
            errors.append(abs(np.mean([(p - o.overhead_ms) / o.step_ms for p, o in zip(predicted, test, strict=True)])))
        return float(np.mean(errors))

    return _best(STREAM_CHOICES, error)


def _best(choices: tuple[float, ...], error: Callable[[float], float]) -> float:
    """The choice of the smallest error; of equals the largest working set (a split is kept only where it lowers
    the error: with no traffic past any split, "never")."""
    best, best_error = choices[-1], float("inf")
    for choice in reversed(choices):
        value = error(choice)
        if value < best_error - 1e-9:
            best, best_error = choice, value
    return best


def _fit_group(x: np.ndarray, y: np.ndarray, trial: np.ndarray) -> object:
    """One group's model (a type, a family or all layers) from its layers' rows, fitted on per-trial sums.

    Why sums: the models are linear, so a trial's layers of one type add up to one row without losing anything
    the model could use, and the fit then weighs what a prediction is judged on, the type's time in a step,
    rather than the many small layers' own noisy timings.  Each sum is weighted by 1/its square, so the fit
    minimises relative errors: a type's time in a small model counts as much as in a big one.
    """
    ids = sorted(set(trial.tolist()))
    xs = np.stack([x[trial == i].sum(axis=0) for i in ids])
    ys = np.array([y[trial == i].sum() for i in ids])
    return _linear().fit(xs, ys, sample_weight=1.0 / np.maximum(ys, 1e-3) ** 2)


class _Zero:
    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.zeros(len(x))
