"""When a measured phase ends: after a fixed number of steps, or when a rule over the steps so far says so.

The worker asks its rule after every step; a rule sees the durations measured so far (ms) and answers with the
reason it stops, or ``None`` to go on.  The reason is recorded in the result (``stopped_by``), so a figure always
says which rule produced it.
"""

from __future__ import annotations

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
