"""When a measured phase ends: after a fixed number of steps, or when a rule over the steps so far says so.

The worker asks its rule after every step; a rule sees the durations measured so far (ms) and answers with the
reason it stops, or ``None`` to go on.  The reason is recorded in the result (``stopped_by``), so a figure always
says which rule produced it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from edgebench.trial import Trial


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


class TargetCI:
    """Stop once the 95% confidence half-width of the mean step time is within ``target_pct`` of the mean.

    A short noisy trial then runs as many steps as its noise needs, and a long stable one stops after a few, so
    both report a mean that is good to ``target_pct``.  ``min_steps`` keeps a lucky run of equal first steps from
    ending the phase; ``max_steps`` and ``max_time_s`` bound a trial whose noise never settles (the reason then
    says which cap ended it and the precision reached).
    """

    def __init__(
        self,
        target_pct: float,
        *,
        min_steps: int,
        max_steps: int,
        max_time_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # scipy is imported here, not at module level: fixed-step workers never pay for it.
        from edgebench.measure.stats import ci95_half_width

        self._half_width = ci95_half_width
        self.target_pct = target_pct
        self.min_steps = max(min_steps, 2)
        self.max_steps = max_steps
        self.max_time_s = max_time_s
        self._clock = clock
        self._start: float | None = None

    def relative_ci_pct(self, durations_ms: list[float]) -> float:
        """Half-width of the 95% interval of the mean in percent of the mean (inf when undefined)."""
        if len(durations_ms) < 2:
            return math.inf
        mean = math.fsum(durations_ms) / len(durations_ms)
        return 100.0 * self._half_width(durations_ms) / mean if mean > 0 else math.inf

    def check(self, durations_ms: list[float]) -> str | None:
        now = self._clock()
        if self._start is None:
            self._start = now
        n = len(durations_ms)
        if n < self.min_steps:
            return None
        ci_pct = self.relative_ci_pct(durations_ms)
        if ci_pct <= self.target_pct:
            return f"target-ci: ±{ci_pct:.2f}% <= {self.target_pct:g}% after {n} steps"
        if n >= self.max_steps:
            return f"step cap: {n} steps (ci ±{ci_pct:.2f}%, target {self.target_pct:g}%)"
        if now - self._start >= self.max_time_s:
            return f"time cap: {self.max_time_s:g} s after {n} steps (ci ±{ci_pct:.2f}%, target {self.target_pct:g}%)"
        return None


def train_rule(trial: Trial) -> StopRule:
    """The rule for a trial's measured training phase: fixed steps, or the target-CI rule with its caps."""
    if trial.target_ci_pct is None:
        return FixedSteps(trial.steps)
    return TargetCI(trial.target_ci_pct, min_steps=trial.steps, max_steps=trial.max_steps, max_time_s=trial.max_time_s)
