"""Cool-down between trials: a fixed pause, or waiting until the device is back near its idle temperature.

Heat from one trial throttles the next (the MNN-based suite pauses 120 s between models for that reason).  A
fixed pause is either too long or too short depending on the model; waiting for every temperature sensor to come
back within a few degrees of what it read before the first trial is as long as needed and no longer.  A device
without temperature sensors falls back to the fixed pause, and the result says which rule was used.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from edgebench.config.sweep_file import CooldownConfig
from edgebench.host.sysfs import SysFS
from edgebench.records.trial import Trial
from edgebench.sensors.thermal import TempSource, temperature_sources

#: The MNN-based suite's pause, used when idle temperature is asked for on a device without sensors.
FALLBACK_S = 120.0

Tick = Callable[[str], None]


@dataclass(frozen=True)
class CooldownOutcome:
    waited_s: float
    rule: str


class Cooler:
    """Measures idle temperatures once (:meth:`measure_idle`) and waits between trials (:meth:`wait`)."""

    def __init__(
        self,
        config: CooldownConfig,
        sysfs: SysFS,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        poll_s: float = 1.0,
    ) -> None:
        self.config = config
        self.sysfs = sysfs
        self.clock = clock
        self.sleep = sleep
        self.poll_s = poll_s
        self.sources: list[TempSource] = temperature_sources(sysfs) if config.until_idle else []
        self.idle_c: dict[str, float] = {}

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    def describe(self) -> str:
        if not self.config.enabled:
            return "no cool-down"
        if not self.config.until_idle:
            return f"fixed {self.config.seconds:g} s between {self.config.between}"
        if not self.sources:
            return f"no temperature sensor on this device: a fixed {self._fallback_s():g} s instead of idle temperature"
        return (
            f"until every temperature is within {self.config.within_c:g} °C of idle "
            f"(at most {self.config.timeout_s:g} s) between {self.config.between}"
        )

    def read_c(self) -> dict[str, float]:
        """Current temperature of every source that reads (°C)."""
        out = {}
        for source in self.sources:
            milli = self.sysfs.read_int(source.path)
            if milli is not None:
                out[source.label] = milli / 1000.0
        return out

    def measure_idle(self, samples: int = 3) -> dict[str, float]:
        """Idle value of each sensor: the mean of a few reads before the first trial."""
        if not self.sources:
            return {}
        reads: dict[str, list[float]] = {}
        for i in range(samples):
            if i:
                self.sleep(self.poll_s)
            for label, value in self.read_c().items():
                reads.setdefault(label, []).append(value)
        self.idle_c = {label: sum(v) / len(v) for label, v in reads.items()}
        return self.idle_c

    def _fallback_s(self) -> float:
        return self.config.seconds if self.config.seconds is not None else FALLBACK_S

    def wait(self, tick: Tick = lambda _: None) -> CooldownOutcome:
        """Cool down before the next trial; ``tick`` is told what is being waited for, about once a second."""
        if not self.config.enabled:
            return CooldownOutcome(0.0, "none")
        if self.config.until_idle and self.sources:
            return self._until_idle(tick)
        seconds = self._fallback_s() if self.config.until_idle else float(self.config.seconds or 0.0)
        rule = f"fixed {seconds:g} s" + (" (no temperature sensor)" if self.config.until_idle else "")
        return self._pause(seconds, rule, tick)

    def _pause(self, seconds: float, rule: str, tick: Tick) -> CooldownOutcome:
        start = self.clock()
        while (left := seconds - (self.clock() - start)) > 0:
            tick(f"cooling down: {left:.0f} s left ({rule})")
            self.sleep(min(self.poll_s, left))
        return CooldownOutcome(self.clock() - start, rule)

    def _until_idle(self, tick: Tick) -> CooldownOutcome:
        start = self.clock()
        within = self.config.within_c
        while True:
            now = self.read_c()
            hot = {k: v for k, v in now.items() if k in self.idle_c and v > self.idle_c[k] + within}
            waited = self.clock() - start
            if not hot:
                return CooldownOutcome(waited, f"idle temperature (within {within:g} °C) after {waited:.0f} s")
            worst = max(hot, key=lambda k: hot[k] - self.idle_c[k])
            state = f"{worst} {hot[worst]:.1f} °C, idle {self.idle_c[worst]:.1f} °C"
            if waited >= self.config.timeout_s:
                return CooldownOutcome(waited, f"timeout after {waited:.0f} s ({state})")
            tick(f"cooling down: {state}")
            self.sleep(self.poll_s)


def cools_between(config: CooldownConfig, previous: Trial, upcoming: Trial) -> bool:
    """Whether a device cools down between ``previous`` and ``upcoming`` (every trial, or when the model changes)."""
    if not config.enabled:
        return False
    return config.between == "trials" or previous.model != upcoming.model
