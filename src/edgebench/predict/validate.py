"""The predictor measured on what is stored: each model (or batch size) held out, predicted from the rest.

Leave-one-model-out is the question a user asks (a model never run on the device); leave-one-batch-size-out
is the easier one (the model was run, at other batch sizes).  A trial's error is predicted / measured - 1; a
model's error is the mean of its trials' errors (its batch sizes), and the shares within ±10%, ±20% and ±25% count
models, not trials, so a model traced at many batch sizes does not count more.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from edgebench.predict.model import fit
from edgebench.predict.observations import Observation


@dataclass(frozen=True)
class HeldOut:
    trial_id: str
    model: str
    batch_size: int
    #: The held-out trial's step: its worker's CPU time per step where sampled (one thread), else its wall time.
    measured_ms: float
    predicted_ms: float
    #: Its wall time per step and the share of the core its worker had (None: not sampled, wall time used).
    wall_ms: float | None = None
    cpu_share: float | None = None

    @property
    def error(self) -> float:
        return self.predicted_ms / self.measured_ms - 1.0


@dataclass(frozen=True)
class Validation:
    scheme: str  # "leave-one-model-out" or "leave-one-batch-size-out"
    rows: list[HeldOut]
    #: Groups (models or batch sizes) that could not be held out: the rest held no other group.
    skipped: list[str]

    def model_errors(self) -> dict[str, float]:
        """Per model: the mean of its held-out trials' relative errors."""
        by: dict[str, list[float]] = defaultdict(list)
        for row in self.rows:
            by[row.model].append(row.error)
        return {m: float(np.mean(e)) for m, e in sorted(by.items())}

    def share_within(self, bound: float) -> float | None:
        errors = list(self.model_errors().values())
        return sum(abs(e) <= bound for e in errors) / len(errors) if errors else None

    def median_abs_error(self) -> float | None:
        errors = list(self.model_errors().values())
        return float(np.median(np.abs(errors))) if errors else None


def _held_out(observations: list[Observation], key: str) -> Validation:
    def group(o: Observation) -> object:
        return o.graph.config.model if key == "model" else o.graph.config.batch_size

    groups = sorted({group(o) for o in observations}, key=str)
    rows: list[HeldOut] = []
    skipped: list[str] = []
    for g in groups:
        train = [o for o in observations if group(o) != g]
        test = [o for o in observations if group(o) == g]
        if not train:
            skipped.append(str(g))
            continue
        model = fit(train)
        for o in test:
            rows.append(
                HeldOut(
                    trial_id=o.trial_id,
                    model=o.graph.config.model,
                    batch_size=o.graph.config.batch_size,
                    measured_ms=o.step_ms,
                    predicted_ms=model.predict(o.graph).step_ms,
                    wall_ms=o.wall_step_ms,
                    cpu_share=o.cpu_share,
                )
            )
    scheme = "leave-one-model-out" if key == "model" else "leave-one-batch-size-out"
    return Validation(scheme, rows, skipped)


def leave_one_model_out(observations: list[Observation]) -> Validation:
    return _held_out(observations, "model")


def leave_one_batch_size_out(observations: list[Observation]) -> Validation:
    return _held_out(observations, "batch_size")
