"""Estimated energy for devices without a power sensor: a linear utilization model, offered only when asked.

``P = P_idle + (P_max - P_idle) * U_cpu + P_gpu * U_gpu``: power grows linearly with the mean CPU utilization of
all cores (the characterization paper's equation 2, from ``/proc/stat``) from the device's idle power to its power
with every core busy, plus, where a GPU utilization was measured, the GPU's extra power at full load.  The energy
above idle over a window of ``T`` seconds is therefore ``(P - P_idle) * T``, the same quantity as the measured
``energy_j``.  The coefficients belong to the device and come from the user (a datasheet, or one measurement with
a power meter): edgebench has no way to know them and does not make them up.

Estimates are labelled with the model and its coefficients and kept in their own ``estimated_*`` fields: they never
stand in ``energy_j``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TERM = re.compile(r"^\s*(idle|max|gpu)\s*=\s*(\d+(?:\.\d*)?|\.\d+)\s*(mw|w)?\s*$", re.IGNORECASE)
EXAMPLE = "idle=2.7W,max=6.4W (and gpu=10W for a GPU's extra power at full load)"


@dataclass(frozen=True)
class PowerModel:
    idle_w: float
    max_w: float
    gpu_w: float = 0.0

    def describe(self) -> str:
        gpu = f" + {self.gpu_w:g} W * U_gpu" if self.gpu_w else ""
        return f"linear-utilization: P = {self.idle_w:g} W + ({self.max_w:g} W - {self.idle_w:g} W) * U_cpu{gpu}"

    def spec(self) -> str:
        """The canonical text form, which :func:`parse_power_model` reads back."""
        gpu = f",gpu={self.gpu_w:g}W" if self.gpu_w else ""
        return f"idle={self.idle_w:g}W,max={self.max_w:g}W{gpu}"

    def power_w(self, cpu_util_pct: float, gpu_util_pct: float | None = None) -> float:
        gpu = self.gpu_w * (gpu_util_pct or 0.0) / 100.0
        return self.idle_w + (self.max_w - self.idle_w) * cpu_util_pct / 100.0 + gpu


def parse_power_model(text: str) -> PowerModel:
    """``idle=2.7W,max=6.4W[,gpu=10W]`` (``mW`` accepted) -> :class:`PowerModel`; ``ValueError`` naming the fix."""
    values: dict[str, float] = {}
    for term in filter(None, (t.strip() for t in str(text).split(","))):
        match = _TERM.match(term)
        if not match:
            raise ValueError(f"{term!r} is not a coefficient; give the device's power as {EXAMPLE}")
        scale = 1e-3 if (match.group(3) or "w").lower() == "mw" else 1.0
        values[match.group(1).lower()] = float(match.group(2)) * scale
    if "idle" not in values or "max" not in values:
        raise ValueError(f"needs the device's idle and full-load power, e.g. {EXAMPLE}")
    if values["max"] < values["idle"]:
        raise ValueError(f"max ({values['max']:g} W) is below idle ({values['idle']:g} W)")
    return PowerModel(values["idle"], values["max"], values.get("gpu", 0.0))


@dataclass(frozen=True)
class EnergyEstimate:
    model: str
    active_j: float
    avg_power_w: float
    idle_power_w: float


def estimate_energy(
    model: PowerModel, cpu_util_pct: float, window_s: float, gpu_util_pct: float | None = None
) -> EnergyEstimate:
    """Energy above idle over ``window_s`` at the given utilization, and the modelled mean and idle power."""
    power = model.power_w(cpu_util_pct, gpu_util_pct)
    return EnergyEstimate(model.describe(), (power - model.idle_w) * window_s, power, model.idle_w)
