"""A prediction with its interval, the trials it learned from, and how far the configuration lies from them.

The interval has two parts, both from the stored trials: how much the fitted models move when the trials are
resampled (a bootstrap over trials: the models' uncertainty), widened by how far the stored trials' own steps lie
from the models' fit (the spread the models cannot explain).  Extrapolation is named, never hidden: a batch size,
thread count or clock outside those stored, a step's FLOPs outside the stored range, or layer types no stored
trial had (predicted by the model of all layers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from edgebench.predict.model import MIN_TRIALS_PER_TYPE, Breakdown, CostModel, fit, select_update_bytes
from edgebench.predict.observations import Graph, Observation

BOOTSTRAP = 40
LEVEL = 0.9
#: The fewest stored trials an interval is given from: the models' spread over resampled trials and the trials'
#: own spread about the fit both need several (from one trial both are zero, and the interval would be a point).
MIN_TRIALS_FOR_INTERVAL = 3


@dataclass
class Nearest:
    trial_id: str
    model: str
    batch_size: int
    #: log2 of this configuration's step FLOPs over the nearest stored trial's (0 = the same work).
    log2_flops_ratio: float


@dataclass
class Prediction:
    graph: Graph
    point: Breakdown
    low_ms: float
    high_ms: float
    #: The models' own spread over bootstrap resamples of the trials: (5%, 95%) of the step time.
    spread: tuple[float, float]
    learned_from: list[Observation]
    nearest: Nearest
    extrapolation: list[str] = field(default_factory=list)
    #: The working set above which the models price a parameter tensor's update as streamed
    #: (:func:`edgebench.predict.model.select_update_bytes`).
    update_bytes: float = float("inf")
    #: Why there is no interval (too few trials): ``low_ms`` is then 0 and ``high_ms`` infinite.
    interval_note: str | None = None

    @property
    def relative_width(self) -> float:
        """The interval's width over the prediction: the uncertainty ``--suggest`` reduces."""
        return (self.high_ms - self.low_ms) / self.point.step_ms if self.point.step_ms > 0 else float("inf")


def residual_quantiles(model: CostModel, observations: list[Observation]) -> tuple[float, float]:
    """(5%, 95%) of the stored trials' relative error under ``model`` (measured / predicted - 1)."""
    errors = [o.step_ms / model.predict(o.graph).step_ms - 1.0 for o in observations]
    if len(errors) < 2:
        return (0.0, 0.0)
    lo, hi = np.quantile(errors, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return (min(float(lo), 0.0), max(float(hi), 0.0))


def bootstrap_models(
    observations: list[Observation], rounds: int = BOOTSTRAP, seed: int = 0, update_bytes: float | None = None
) -> list[CostModel]:
    """Models fitted on resamples of the trials (whole trials are resampled: a trial's layers are not independent),
    at the update's streaming working set chosen on all of them (``update_bytes``, or chosen here once)."""
    rng = np.random.default_rng(seed)
    n = len(observations)
    if n < 2:
        return []
    if update_bytes is None:
        update_bytes = select_update_bytes(observations)
    return [fit([observations[i] for i in rng.integers(0, n, n)], update_bytes) for _ in range(rounds)]


def extrapolation(graph: Graph, observations: list[Observation], point: Breakdown) -> tuple[Nearest, list[str]]:
    cfg = graph.config
    stored = [o.graph for o in observations]
    flags: list[str] = []
    batches = sorted({g.config.batch_size for g in stored})
    if not batches[0] <= cfg.batch_size <= batches[-1]:
        flags.append(f"batch size {cfg.batch_size} outside the stored {batches[0]}-{batches[-1]}")
    threads = sorted({g.config.threads for g in stored})
    if cfg.threads not in threads:
        flags.append(f"{cfg.threads} threads: the stored trials ran {', '.join(map(str, threads))}")
    freqs = sorted({g.config.freq_khz for g in stored if g.config.freq_khz})
    if cfg.freq_khz and freqs and cfg.freq_khz not in freqs:
        flags.append(f"clock {cfg.freq_khz:.0f} kHz: the stored trials ran {', '.join(f'{f:.0f}' for f in freqs)}")
    work = [g.total_flops for g in stored]
    if not min(work) <= graph.total_flops <= max(work):
        flags.append(
            f"{graph.total_flops / 1e9:.3g} GFLOPs per step, outside the stored {min(work) / 1e9:.3g}-"
            f"{max(work) / 1e9:.3g}"
        )
    if point.unseen_types:
        flags.append(
            f"{100 * point.unseen_share:.0f}% of the step is layer types fewer than {MIN_TRIALS_PER_TYPE} stored "
            "trials had "
            f"({', '.join(point.unseen_types[:5])}{'...' if len(point.unseen_types) > 5 else ''}): "
            "predicted by the model of all layers"
        )
    if all(g.config.model != cfg.model for g in stored):
        flags.append(f"model {cfg.model} has no stored trial on this device")
    dist = [
        abs(np.log2(max(graph.total_flops, 1.0) / max(g.total_flops, 1.0))) + (g.config.model != cfg.model)
        for g in stored
    ]
    i = int(np.argmin(dist))
    near = observations[i]
    nearest = Nearest(
        trial_id=near.trial_id,
        model=near.graph.config.model,
        batch_size=near.graph.config.batch_size,
        log2_flops_ratio=float(np.log2(max(graph.total_flops, 1.0) / max(near.graph.total_flops, 1.0))),
    )
    return nearest, flags


def predict(
    graph: Graph,
    observations: list[Observation],
    *,
    model: CostModel | None = None,
    boot: list[CostModel] | None = None,
) -> Prediction:
    """Predict ``graph``'s step from ``observations`` (pass ``model``/``boot`` to reuse fitted ones)."""
    model = model or fit(observations)
    boot = bootstrap_models(observations, update_bytes=model.update_bytes) if boot is None else boot
    point = model.predict(graph)
    steps = [b.predict(graph).step_ms for b in boot] or [point.step_ms]
    lo_b, hi_b = np.quantile(steps, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    lo_r, hi_r = residual_quantiles(model, observations)
    low = min(float(lo_b), point.step_ms) * (1.0 + lo_r)
    high = max(float(hi_b), point.step_ms) * (1.0 + hi_r)
    nearest, flags = extrapolation(graph, observations, point)
    note = None
    if len(observations) < MIN_TRIALS_FOR_INTERVAL:
        n = len(observations)
        note = (
            f"no interval: learned from {n} traced trial{'s' if n != 1 else ''}, and an interval needs "
            f"{MIN_TRIALS_FOR_INTERVAL} or more (the models' spread and the trials' own spread cannot be told from "
            "fewer); trace more configurations"
        )
        low, high = 0.0, float("inf")
    return Prediction(
        graph=graph,
        point=point,
        interval_note=note,
        low_ms=max(low, 0.0),
        high_ms=high,
        spread=(float(lo_b), float(hi_b)),
        learned_from=observations,
        nearest=nearest,
        extrapolation=flags,
        update_bytes=model.update_bytes,
    )
