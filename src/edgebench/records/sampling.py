"""What a sampling run recorded besides its numbers: the sampler's half of a trial bundle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class SamplerMeta:
    """What a sampling run was: which sensors read, which could not and why, and what the sampler itself cost."""

    interval_ms: float
    columns: list[str]
    sensors: list[str]
    unavailable: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)
    clk_tck: int = 100
    anchor_wall_ns: int = 0
    anchor_mono_ns: int = 0
    samples: int = 0
    late_samples: int = 0
    loop_cpu_s: float = 0.0
    loop_wall_s: float = 0.0
    #: The power and energy quantities among the columns (``PowerChannel`` as dicts), for ``measure.power``.
    power_channels: list[dict[str, Any]] = field(default_factory=list)
    #: Which sampler took the samples: ``python`` (the sampler process), ``sh`` (the device-side script's own loop)
    #: or ``native`` (the static binary, ``agents/native/sampler.c``); "" in records made before it was kept.
    kind: str = ""
    #: Why that sampler: the native build that ran, or why the native one did not (None: the only one there was).
    why: str | None = None

    @property
    def cpu_pct_of_core(self) -> float:
        """Share of one core the polling loop used (start-up excluded)."""
        return 100.0 * self.loop_cpu_s / self.loop_wall_s if self.loop_wall_s > 0 else 0.0
