"""What the launch path is told of a trial before it runs and records with it, so its result is whole when made.

The executor knows where a trial sits (its sweep, its key there, its repeat); the launcher adds what it did to the
device just before (the cool-down, the clocks it pinned); measuring the bundle puts all of it in the result
(:func:`edgebench.measure.trial.measure`).  Nothing is added to a result after it is made.
"""

from __future__ import annotations

from edgebench.records.model import Record
from edgebench.records.result import Repeat, SweepInfo


class LaunchContext(Record):
    """A trial's place and the launch's facts: the target as the user named it, its place in a sweep, its repeat,
    and the frequency each cpufreq policy of its cores was pinned to (kHz; None: not pinned)."""

    target: str = "local"
    sweep: SweepInfo | None = None
    repeat: Repeat | None = None
    freq_applied_khz: dict[str, int] | None = None
