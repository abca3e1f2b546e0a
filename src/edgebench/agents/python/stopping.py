"""When a measured phase ends: after a fixed number of steps, or when a rule over the steps so far says so.

The worker asks its rule after every step; a rule sees the durations measured so far (ms) and answers with the
reason it stops, or ``None`` to go on.  The reason is recorded in the result (``stopped_by``), so a figure always
says which rule produced it.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from edgebench.measure.utilization import min_cpu_share_window_s
from edgebench.records.trial import DEFAULT_MAX_STEPS

if TYPE_CHECKING:
    from edgebench.records.trial import Trial


class StopRule(Protocol):
    def check(self, durations_ms: list[float]) -> str | None:
        """Why the phase ends now, or ``None`` to take another step."""
        ...


class FixedSteps:
    """Stop after ``n`` steps (the MNN-based suite's and the characterization paper's rule), and not before the
    phase has lasted ``min_time_s``: 20 steps of a small model last a tenth of a second, too short a window for
    the kernel's CPU-time accounting to say what share of the cores the worker used."""

    def __init__(self, n: int, min_time_s: float = 0.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.n, self.min_time_s, self._clock = n, min_time_s, clock
        self._start: float | None = None

    def check(self, durations_ms: list[float]) -> str | None:
        now = self._clock()
        if self._start is None:
            self._start = now
        if len(durations_ms) < self.n:
            return None
        if now - self._start < self.min_time_s:
            return None
        if len(durations_ms) == self.n:
            return f"fixed: {self.n} steps"
        return f"min time: {self.min_time_s:.2f} s after {len(durations_ms)} steps ({self.n} asked)"


def min_time_s(trial: Trial) -> float:
    """The least time a measured phase of ``trial`` lasts: ``auto`` is the window CPU-time accounting resolves on
    the trial's cores (the same bound the figure is checked against afterwards)."""
    if trial.min_time_s == "auto":
        cores = len(trial.cores) if trial.cores else (os.cpu_count() or 1)
        return min_cpu_share_window_s(cores)
    return trial.min_time_s or 0.0


_BLOCK = 10_000


class TargetCI:
    """Stop once the 95% confidence half-width of the mean step time is within ``target_pct`` of the mean.

    A short noisy trial then runs as many steps as its noise needs, and a long stable one stops after a few, so
    both report a mean that is good to ``target_pct``.  ``min_steps`` keeps a lucky run of equal first steps from
    ending the phase; ``max_steps`` and ``max_time_s`` bound a trial whose noise never settles (the reason then
    says which cap ended it and the precision reached).

    The interval is the one :func:`edgebench.measure.stats.ci95_half_width` gives, kept up to date in O(1) per
    step (Welford's running mean and variance, Student-t quantiles computed once), because the check runs between
    every two steps: recomputing it from all steps with scipy cost 0.2-0.3 ms a step, a few percent of a LeNet step.
    The rule expects, as the worker gives it, the same list growing by one step per call.
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
        import numpy as np

        from edgebench.measure.stats import t975

        self.target_pct = target_pct
        self.min_steps = max(min_steps, 2)
        self.max_steps = max_steps
        self.max_time_s = max_time_s
        self._clock = clock
        self._start: float | None = None
        self._t975_of, self._arange = t975, np.arange
        #: t quantile for df = n - 1 at index n - 2, computed in blocks of 10,000 as the trial gets there
        self._t975: list[float] = []
        self._extend_quantiles(min(max(max_steps, 2), _BLOCK))
        self._n, self._mean, self._m2 = 0, 0.0, 0.0

    def _extend_quantiles(self, size: int) -> None:
        dfs = self._arange(len(self._t975) + 1, size + 1)
        self._t975.extend(float(q) for q in self._t975_of(dfs))

    def _absorb(self, durations_ms: list[float]) -> None:
        if len(durations_ms) < self._n:  # a new list: start over
            self._n, self._mean, self._m2 = 0, 0.0, 0.0
        for x in durations_ms[self._n :]:
            self._n += 1
            delta = x - self._mean
            self._mean += delta / self._n
            self._m2 += delta * (x - self._mean)

    def relative_ci_pct(self, durations_ms: list[float]) -> float:
        """Half-width of the 95% interval of the mean in percent of the mean (inf when undefined)."""
        self._absorb(durations_ms)
        n = self._n
        if n < 2 or self._mean <= 0:
            return math.inf
        if n - 2 >= len(self._t975):
            self._extend_quantiles(n - 2 + _BLOCK)
        t = self._t975[n - 2]
        half_width = t * math.sqrt(max(self._m2, 0.0) / (n - 1)) / math.sqrt(n)
        return 100.0 * half_width / self._mean

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


class HeldOutLoss:
    """A language model's held-out loss, scored every ``every`` measured steps and when ``inner`` ends the phase
    (outside the timed steps, reported through ``on_eval`` as :class:`UntilAccuracy` does); with ``target`` (bits per
    byte) the rule itself stops once the loss reaches it: time to perplexity.  ``max_steps`` bounds a target never
    reached."""

    def __init__(
        self,
        held_out: Callable[[], dict[str, float]],
        every: int,
        on_eval: Callable[..., None] | None = None,
        *,
        inner: StopRule | None = None,
        target: float | None = None,
        max_steps: int | None = None,
    ) -> None:
        self.held_out, self.every, self.on_eval, self.inner = held_out, every, on_eval, inner
        self.target, self.max_steps = target, max_steps
        self.best: float | None = None
        self._scored = 0

    def check(self, durations_ms: list[float]) -> str | None:
        n = len(durations_ms)
        reason = self.inner.check(durations_ms) if self.inner is not None else None
        last = self.max_steps is not None and n >= self.max_steps
        due = n > 0 and n != self._scored and (n % self.every == 0 or reason is not None or last)
        if not due:
            return reason
        self._scored = n
        start = time.perf_counter_ns()
        point = self.held_out()
        end = time.perf_counter_ns()
        if self.on_eval is not None:
            self.on_eval(step=n, start_ns=start, end_ns=end, **point)
        bits = point["bits_per_byte"]
        self.best = bits if self.best is None else min(self.best, bits)
        if self.target is not None and bits <= self.target:
            return f"bits per byte: {bits:.3f} <= {self.target:.3f} after {n} steps"
        if self.target is not None and last:
            return f"max steps: {n} steps without reaching {self.target:.3f} bits per byte (best {self.best:.3f})"
        return reason


def train_rule(
    trial: Trial,
    evaluate: Callable[[], float] | None = None,
    on_eval: Callable[..., None] | None = None,
    held_out: Callable[[], dict[str, float]] | None = None,
    unigram_bits_per_byte: float | None = None,
) -> StopRule:
    """The rule for a trial's measured training phase: until an accuracy, until a target CI, or fixed steps; a
    language model with held-out text (``held_out``) also scores its held-out loss along the way, or trains until
    it reaches ``until_bits_per_byte`` (``unigram``: the text's ``unigram_bits_per_byte``).

    ``max_steps`` caps whichever adaptive rule is chosen (2,000 steps for the target-CI rule when unset; an accuracy
    run without it is bounded by the trial's timeout alone).  ``evaluate`` is the session's held-out accuracy.
    """
    if held_out is not None and trial.data is not None and trial.until_accuracy is None and trial.mode == "train":
        if trial.until_bits_per_byte is not None:
            target = unigram_bits_per_byte if trial.until_bits_per_byte == "unigram" else trial.until_bits_per_byte
            if target is None:
                raise ValueError("until_bits_per_byte: unigram needs the text's unigram line")
            return HeldOutLoss(held_out, trial.eval_every, on_eval, target=float(target), max_steps=trial.max_steps)
        inner = train_rule(trial.model_copy(update={"data": None}))
        return HeldOutLoss(held_out, trial.eval_every, on_eval, inner=inner)
    if trial.until_accuracy is not None:
        if evaluate is None:
            raise ValueError("until_accuracy needs the session's evaluate()")
        return UntilAccuracy(trial.until_accuracy, evaluate, trial.eval_every, trial.max_steps, on_eval)
    if trial.target_ci_pct is not None:
        return TargetCI(
            trial.target_ci_pct,
            min_steps=trial.steps,
            max_steps=trial.max_steps or DEFAULT_MAX_STEPS,
            max_time_s=trial.max_time_s,
        )
    return FixedSteps(trial.steps, min_time_s(trial))
