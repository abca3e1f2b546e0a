"""A trial's energy figures: measured from the best power source, or estimated when asked, never mixed.

The idle baseline is the ``idle`` event the launcher records: a window before the warm-up in which the worker has
built its model and waits, with the sampler already polling.  Per-step and per-sample energy divide the training
window's energy by the measured steps and by steps x batch size, as the MNN-based suite's ``singleBatch`` and
``singleSample`` tables do.
"""

from __future__ import annotations

import math
from typing import Any

from edgebench.measure.estimate import estimate_energy, parse_power_model
from edgebench.measure.gpu import gpu_utilization_pct
from edgebench.measure.power import device_energy
from edgebench.records.events import EventsLike, Idle, as_events, first
from edgebench.records.result import GpuUtil, RailEnergy
from edgebench.records.trial import Trial
from edgebench.sensors.samples import Samples


def idle_window(events: EventsLike) -> tuple[int, int] | None:
    idle = first(as_events(events), Idle)
    return (idle.start_ns, idle.end_ns) if idle else None


def _none_if_nan(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def gpu_fields(samples: Samples | None, t0: int, t1: int) -> dict[str, Any]:
    if samples is None or len(samples) < 2:
        return {}
    per_gpu = gpu_utilization_pct(samples, t0, t1)
    if not per_gpu:
        return {}
    known = [u for u in per_gpu if not math.isnan(u)]
    return {
        "gpu_util_pct": GpuUtil(
            per_gpu=[_none_if_nan(u) for u in per_gpu], mean=sum(known) / len(known) if known else None
        )
    }


def per_step_and_sample(energy_j: float, steps: int, batch_size: int) -> tuple[float, float]:
    """The MNN-based suite's ``singleBatch`` and ``singleSample`` figures: ``E / steps``, ``E / (steps * batch)``."""
    return energy_j / steps, energy_j / (steps * batch_size)


def energy_fields(
    trial: Trial,
    events: EventsLike,
    samples: Samples | None,
    t0: int,
    t1: int,
    steps: int,
    cpu_util_mean_pct: float | None,
    gpu_util_mean_pct: float | None = None,
) -> dict[str, Any]:
    """The ``energy_*``, ``idle_*``, ``avg_power_w`` and ``estimated_*`` fields of a trial's result."""
    out: dict[str, Any] = {}
    idle = idle_window(events)
    if idle:
        out["idle_window_s"] = (idle[1] - idle[0]) / 1e9
    figures = device_energy(samples, t0, t1, idle) if samples is not None and len(samples) >= 2 else None
    if figures is not None:
        per_step, per_sample = per_step_and_sample(figures.active_j, steps, trial.batch_size)
        out.update(
            energy_j=figures.active_j,
            energy_per_step_j=per_step,
            energy_per_sample_j=per_sample,
            energy_gross_j=figures.gross_j,
            energy_window_s=figures.window_s,
            idle_power_w=figures.idle_power_w,
            avg_power_w=figures.avg_power_w,
            energy_source=figures.source,
            energy_by_rail={
                name: RailEnergy(
                    energy_j=r.active_j,
                    gross_energy_j=r.gross_j,
                    avg_power_w=r.avg_power_w,
                    idle_power_w=r.idle_power_w,
                )
                for name, r in figures.rails.items()
            },
            energy_notes=list(figures.notes) or None,
        )
    if trial.estimate_energy and cpu_util_mean_pct is not None:
        model = parse_power_model(trial.estimate_energy)
        window_s = (t1 - t0) / 1e9
        estimate = estimate_energy(model, cpu_util_mean_pct, window_s, gpu_util_mean_pct)
        per_step, per_sample = per_step_and_sample(estimate.active_j, steps, trial.batch_size)
        out.update(
            estimated_energy_j=estimate.active_j,
            estimated_energy_per_step_j=per_step,
            estimated_energy_per_sample_j=per_sample,
            estimated_avg_power_w=estimate.avg_power_w,
            estimated_idle_power_w=estimate.idle_power_w,
            estimated_energy_source=f"estimated: {estimate.model}",
        )
        if figures is None:
            out["energy_source"] = f"estimated: {estimate.model}"
    return out
