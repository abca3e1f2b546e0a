"""What throttling is judged against: each cpufreq policy's unthrottled clock and the device's hot threshold."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PolicyLimit:
    """The cores of one cpufreq policy and the clock they would run at unthrottled (kHz)."""

    name: str
    cores: tuple[int, ...]
    max_khz: int


@dataclass(frozen=True)
class ThrottleReference:
    """What throttling is judged against, read from the device when a trial or a monitoring run starts."""

    policies: tuple[PolicyLimit, ...]
    hot_c: float
