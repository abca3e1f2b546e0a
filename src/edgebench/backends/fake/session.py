"""The fake backend's session: a step is a wait of ``EDGEBENCH_FAKE_STEP_MS`` (half sleeping, half a busy loop, so
the sampler sees the CPU used), and step ``EDGEBENCH_FAKE_FAIL_AT`` raises."""

from __future__ import annotations

import os
import time
from typing import Any

from edgebench.errors import UsageError

STEP_MS_ENV = "EDGEBENCH_FAKE_STEP_MS"
FAIL_AT_ENV = "EDGEBENCH_FAKE_FAIL_AT"


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

    def __init__(self, input_shape: tuple[int, ...], num_classes: int, step_ms: float, fail_at: int | None) -> None:
        self.params = 0
        self.input_shape = input_shape
        self.num_classes = num_classes
        self.step_ms = step_ms
        self.fail_at = fail_at
        self.env = {"backend": "fake", "step_ms": step_ms, "fail_at": fail_at}
        self._steps = 0

    def _step(self) -> None:
        if self.fail_at is not None and self._steps == self.fail_at:
            raise FakeStepFailure(f"the fake backend fails at step {self.fail_at} ({FAIL_AT_ENV})")
        self._steps += 1
        half_s = self.step_ms / 2e3
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
    return FakeSession(tuple(shape), classes, _number(STEP_MS_ENV, 5.0, float), _number(FAIL_AT_ENV, None, int))


def task_session(workload: Any, batch_size: int, **options: Any) -> FakeSession:
    """A workload's session on the fake backend (``Workload.session(backend="fake")``)."""
    shape = options.get("input_shape") or workload.input_shape
    classes = options.get("num_classes") or workload.num_classes
    return FakeSession(tuple(shape), classes, _number(STEP_MS_ENV, 5.0, float), _number(FAIL_AT_ENV, None, int))
