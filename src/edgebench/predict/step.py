"""The predictor as a library: a typed, always-labelled prediction of one configuration's step, for other commands.

``edgebench study`` and ``edgebench partition --predicted`` ask for configurations that were never measured;
they get a :class:`PredictedStep` whose ``basis`` is always ``"predicted"`` (never a measured figure), with its
interval, the trials it learned from and every extrapolation flag, and per module the predicted forward and
backward time (what the partition analyzer splits a model by).  A :class:`Predictor` fits the device's models
once and answers many configurations; :func:`predict_step` is the one-call form.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from edgebench.predict.estimate import LEVEL, Prediction, bootstrap_models, predict
from edgebench.predict.model import CostModel, fit
from edgebench.predict.observations import Config, Graph, Observation, graph_of_config
from edgebench.predict.stored import Selection, load_observations
from edgebench.predict.untraced import HookCost, hook_cost


@dataclass(frozen=True)
class PredictedLayer:
    """One module's predicted own time per step (a container's own: the glue between its children)."""

    name: str
    type: str
    forward_ms: float
    backward_ms: float
    #: ``own`` (its type's model), ``family`` or ``all layers`` (no stored trial had its type): how it was made.
    learned_by: str


@dataclass(frozen=True)
class PredictedStep:
    """A configuration's predicted step on a device: never a measurement (``basis`` says so wherever it goes)."""

    model: str
    batch_size: int
    mode: str
    threads: int
    step_ms: float
    #: The interval (``level``, e.g. 0.9) around ``step_ms``: the models' bootstrap spread and the stored
    #: trials' own spread around the fit (:mod:`edgebench.predict.estimate`).
    low_ms: float
    high_ms: float
    level: float
    forward_ms: float
    backward_ms: float
    #: Loss, optimizer update and framework: the step outside every module.
    overhead_ms: float
    energy_j: float | None
    peak_bytes: float | None
    layers: tuple[PredictedLayer, ...]
    learned_from: tuple[str, ...]
    extrapolation: tuple[str, ...]
    #: The step without the layer tracer's hooks, where the store has untraced trials of traced configurations
    #: to calibrate them (:mod:`edgebench.predict.untraced`); None otherwise.
    untraced_step_ms: float | None = None
    #: Why there is no interval (too few trials; ``low_ms`` 0, ``high_ms`` infinite), None where there is one.
    interval_note: str | None = None
    basis: Literal["predicted"] = "predicted"

    @property
    def relative_width(self) -> float:
        return (self.high_ms - self.low_ms) / self.step_ms if self.step_ms > 0 else float("inf")


#: The facts of a configuration's plan (:class:`Graph` fields) that stored trials of another runtime may lack.
PLAN_FACTS = ("kernels", "param_numels", "rows")


class Predictor:
    """The device's cost models, fitted once from its stored traced trials, asked about many configurations."""

    def __init__(self, observations: list[Observation], hooks: HookCost | None = None) -> None:
        self.observations = observations
        #: The tracer's cost per module call on this device, where calibrated (None: not known).
        self.hooks = hooks
        self.model: CostModel = fit(observations)
        self.boot = bootstrap_models(observations, update_bytes=self.model.update_bytes)
        counts = Counter(o.graph.config.threads for o in observations)
        #: The stored trials' most common thread count: the default of a configuration that names none.
        self.threads = counts.most_common(1)[0][0]

    @classmethod
    def from_store(cls, store: Path | None, selection: Selection | None = None) -> Predictor:
        """From the store's layer-traced trials of ``selection`` (UsageError naming ``--store`` when none)."""
        selection = selection or Selection()
        observations, _ = load_observations(store, selection)
        return cls(observations, hook_cost(store, selection, observations))

    def graph(
        self,
        model: str,
        batch_size: int,
        *,
        mode: str = "train",
        threads: int | None = None,
        preset: str | None = None,
        input_shape: tuple[int, ...] | None = None,
    ) -> Graph:
        config = Config(
            model, batch_size, mode=mode, threads=threads or self.threads, preset=preset, input_shape=input_shape
        )
        # What the stored trials were not described by (a runtime other than PyTorch: no plan) is left out of the
        # new configuration too, so it is priced by the same features: convs keyed by type alone (kernels), the
        # rest of the step with its fixed term instead of one per parameter tensor (param_numels), no per-plane
        # term (rows).
        unknown = [f for f in PLAN_FACTS if not any(getattr(o.graph, f) for o in self.observations)]
        return replace(graph_of_config(config), **dict.fromkeys(unknown, ()))

    def prediction(self, graph: Graph) -> Prediction:
        return predict(graph, self.observations, model=self.model, boot=self.boot)

    def step(
        self,
        model: str,
        batch_size: int,
        *,
        mode: str = "train",
        threads: int | None = None,
        preset: str | None = None,
        input_shape: tuple[int, ...] | None = None,
    ) -> PredictedStep:
        graph = self.graph(model, batch_size, mode=mode, threads=threads, preset=preset, input_shape=input_shape)
        return predicted_step(self.prediction(graph), self.model, self.hooks)


def predicted_step(p: Prediction, model: CostModel, hooks: HookCost | None = None) -> PredictedStep:
    """The library record of a prediction, with each module's predicted time."""
    g = p.graph
    per_label, _ = model.label_ms(g)
    names = g.names or tuple(f"#{i}" for i in range(len(g.types)))
    layers = tuple(
        PredictedLayer(name, kind, float(ms[0]), float(ms[1]), model.learned_by(key))
        for name, kind, key, ms in zip(names, g.types, g.kinds, per_label, strict=True)
    )
    b = p.point
    return PredictedStep(
        model=g.config.model,
        batch_size=g.config.batch_size,
        mode=g.config.mode,
        threads=g.config.threads,
        step_ms=b.step_ms,
        low_ms=p.low_ms,
        high_ms=p.high_ms,
        level=LEVEL,
        forward_ms=b.forward_ms,
        backward_ms=b.backward_ms,
        overhead_ms=b.overhead_ms,
        energy_j=b.energy_j,
        peak_bytes=b.peak_bytes,
        layers=layers,
        learned_from=tuple(o.trial_id for o in p.learned_from),
        extrapolation=tuple(p.extrapolation),
        untraced_step_ms=hooks.untraced_ms(b.step_ms, g) if hooks is not None else None,
        interval_note=p.interval_note,
    )


def predict_step(
    model: str,
    batch_size: int,
    *,
    mode: str = "train",
    threads: int | None = None,
    target: str = "local",
    backend: str = "torch",
    cores: tuple[int, ...] | None = None,
    store: Path | None = None,
    preset: str | None = None,
    input_shape: tuple[int, ...] | None = None,
) -> PredictedStep:
    """Predict one configuration from the store's traced trials of ``target`` (see :class:`Predictor` for many)."""
    predictor = Predictor.from_store(store, Selection(target, backend, mode, cores))
    return predictor.step(model, batch_size, mode=mode, threads=threads, preset=preset, input_shape=input_shape)
