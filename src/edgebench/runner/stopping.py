"""When a measured phase ends: after a fixed number of steps, or when a rule over the steps so far says so.

The worker asks its rule after every step; a rule sees the durations measured so far (ms) and answers with the
reason it stops, or ``None`` to go on.  The reason is recorded in the result (``stopped_by``), so a figure always
says which rule produced it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class StopRule(Protocol):
    def check(self, durations_ms: list[float]) -> str | None:
        """Why the phase ends now, or ``None`` to take another step."""
        ...


class FixedSteps:
    """Stop after ``n`` steps (the MNN-based suite's and the characterization paper's rule)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def check(self, durations_ms: list[float]) -> str | None:
        return f"fixed: {self.n} steps" if len(durations_ms) >= self.n else None


class UntilAccuracy:
    """Stop once held-out accuracy reaches ``target`` (MLPerf Training's time-to-train rule).

    Every ``every`` steps the rule calls ``evaluate()`` (outside the timed steps) and reports each evaluation
    through ``on_eval(step=, accuracy=, start_ns=, end_ns=)``, so a trial that is killed still shows how far it
    got.  ``max_steps`` bounds a target that is never reached.
    """

    def __init__(
        self,
        target: float,
        evaluate: Callable[[], float],
        every: int,
        max_steps: int | None = None,
        on_eval: Callable[..., None] | None = None,
    ) -> None:
        self.target, self.evaluate, self.every, self.max_steps = target, evaluate, every, max_steps
        self.on_eval = on_eval
        self.best: float | None = None

    def check(self, durations_ms: list[float]) -> str | None:
        n = len(durations_ms)
        last = self.max_steps is not None and n >= self.max_steps
        if n == 0 or (n % self.every and not last):
            return None
        start = time.perf_counter_ns()
        accuracy = float(self.evaluate())
        end = time.perf_counter_ns()
        if self.on_eval is not None:
            self.on_eval(step=n, accuracy=accuracy, start_ns=start, end_ns=end)
        self.best = accuracy if self.best is None else max(self.best, accuracy)
        if accuracy >= self.target:
            return f"accuracy: {accuracy:.4f} >= {self.target:g} after {n} steps"
        if last:
            return f"max steps: {n} steps without reaching accuracy {self.target:g} (best {self.best:.4f})"
        return None
