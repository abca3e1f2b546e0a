"""The fake backend's session: a step is a wait (half sleeping, half a busy loop, so the sampler sees the CPU used)
of a length its :class:`StepModel` draws, and step ``EDGEBENCH_FAKE_FAIL_AT`` raises.

The step model behaves as real steps do where a conclusion depends on it: each worker process draws its own offset
(real processes differ by memory layout, clock and neighbours: five LeNet processes here gave medians 5.2-7.4 ms)
and its steps wander about it as an AR(1) series (a step is like the one before it), so a test over one process's
steps finds differences between any two processes, as it did with real ones.  Everything is off by default (every
step exactly ``EDGEBENCH_FAKE_STEP_MS``); ``benchmarks/aa_calibration.py`` sets it from what real trials measure.
"""

from __future__ import annotations

import math
import os
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from edgebench.errors import UsageError

STEP_MS_ENV = "EDGEBENCH_FAKE_STEP_MS"
FAIL_AT_ENV = "EDGEBENCH_FAKE_FAIL_AT"
#: The per-process offset: each process's steps are scaled by a log-normal factor of this spread (percent).
PROCESS_CV_ENV = "EDGEBENCH_FAKE_PROCESS_CV_PCT"
#: The step-to-step spread about the process's level (percent, log-normal) ...
STEP_CV_ENV = "EDGEBENCH_FAKE_STEP_CV_PCT"
#: ... and its lag-one autocorrelation (0 <= AR1 < 1: 0 independent steps, 0.9 long slow swings).
AR1_ENV = "EDGEBENCH_FAKE_AR1"
#: Seeds the offset and the steps (the same seed draws the same process every time); unset, each process its own.
SEED_ENV = "EDGEBENCH_FAKE_SEED"


@dataclass(frozen=True)
class StepModel:
    """How long the fake backend's steps take, in ms: ``step_ms`` times a per-process log-normal offset of
    ``process_cv_pct`` times a stationary AR(1) log-normal wander of ``step_cv_pct`` and autocorrelation ``ar1``."""

    step_ms: float = 5.0
    process_cv_pct: float = 0.0
    step_cv_pct: float = 0.0
    ar1: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.ar1 < 1:
            raise ValueError(f"ar1 {self.ar1:g}: the autocorrelation of a stationary series is at least 0 and below 1")

    def process(self, rng: random.Random) -> Iterator[float]:
        """One worker process's step times: its offset drawn once, then each step from the one before it."""
        level = self.step_ms * math.exp(rng.gauss(0.0, self.process_cv_pct / 100))
        sigma = self.step_cv_pct / 100
        wander = rng.gauss(0.0, sigma)
        while True:
            yield level * math.exp(wander)
            wander = self.ar1 * wander + math.sqrt(1 - self.ar1**2) * rng.gauss(0.0, sigma)

    @classmethod
    def from_env(cls) -> StepModel:
        ar1 = _number(AR1_ENV, 0.0, float)
        if ar1 >= 1:
            raise UsageError(AR1_ENV, f"{ar1:g} is not below 1; give 0 (independent steps) up to 0.99")
        return cls(_number(STEP_MS_ENV, 5.0, float), _number(PROCESS_CV_ENV, 0.0, float),
                   _number(STEP_CV_ENV, 0.0, float), ar1)  # fmt: skip


def process_rng() -> random.Random:
    """This process's draw: ``EDGEBENCH_FAKE_SEED`` where set, else fresh entropy."""
    seed = _number(SEED_ENV, None, int)
    return random.Random(seed)


class FakeStepFailure(RuntimeError):
    """The step the environment asked to fail."""


def _number(name: str, default: float | None, kind: type) -> Any:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(name, f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
    if value < 0:
        raise UsageError(name, f"{text!r} is negative; give 0 or more")
    return value


class FakeSession:
    """What the worker drives: steps of a set length, a loss that falls, and nothing on any device."""

    evaluate = None
    quantization = None

    def __init__(self, input_shape: tuple[int, ...], num_classes: int, model: StepModel, fail_at: int | None) -> None:
        self.params = 0
        self.input_shape = input_shape
        self.num_classes = num_classes
        self.step_ms = model.step_ms
        self.fail_at = fail_at
        self.env = {"backend": "fake", "step_ms": model.step_ms, "fail_at": fail_at, "ar1": model.ar1,
                    "process_cv_pct": model.process_cv_pct, "step_cv_pct": model.step_cv_pct}  # fmt: skip
        self._times = model.process(process_rng())
        self._steps = 0

    def _step(self) -> None:
        if self.fail_at is not None and self._steps == self.fail_at:
            raise FakeStepFailure(f"the fake backend fails at step {self.fail_at} ({FAIL_AT_ENV})")
        self._steps += 1
        half_s = next(self._times) / 2e3
        time.sleep(half_s)
        end = time.perf_counter() + half_s
        while time.perf_counter() < end:  # busy: the sampler sees the worker use a core
            pass

    def train_step(self) -> float:
        self._step()
        return 2.3 / (1 + 0.1 * self._steps)

    def infer_step(self) -> None:
        self._step()

    def sync(self) -> None:
        return None

    def to_inference(self) -> None:
        return None

    def reset_device_peak_memory(self) -> None:
        return None

    def device_peak_memory_bytes(self) -> None:
        return None

    def trace_recorder(self) -> None:
        return None


def open_session(trial: Any) -> FakeSession:
    """The trial's session: the workload's input and classes (the trial's own where given), steps from the
    environment."""
    from edgebench.registry import MODELS

    shape, classes = trial.input_shape, trial.num_classes
    if shape is None or classes is None:
        workload = MODELS.load(trial.model) if ":" not in trial.model else None
        shape = shape or (workload.input_shape if workload else (1,))
        classes = classes or (workload.num_classes if workload else 1)
    return FakeSession(tuple(shape), classes, StepModel.from_env(), _number(FAIL_AT_ENV, None, int))


def task_session(workload: Any, batch_size: int, **options: Any) -> FakeSession:
    """A workload's session on the fake backend (``Workload.session(backend="fake")``)."""
    shape = options.get("input_shape") or workload.input_shape
    classes = options.get("num_classes") or workload.num_classes
    return FakeSession(tuple(shape), classes, StepModel.from_env(), _number(FAIL_AT_ENV, None, int))
