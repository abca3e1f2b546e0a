"""A trial's energy figures: measured from the best power source, or estimated when asked, never mixed.

The idle baseline is the ``idle`` event the launcher records: a window before the warm-up in which the worker has
built its model and waits, with the sampler already polling.  Per-step and per-sample energy divide the training
window's energy by the measured steps and by steps x batch size, as the MNN-based suite's ``singleBatch`` and
``singleSample`` tables do.
"""

from __future__ import annotations

import math

from edgebench.measure.energy_error import energy_interval
from edgebench.measure.estimate import estimate_energy, parse_power_model
from edgebench.measure.gpu import gpu_utilization_pct
from edgebench.measure.power import device_energy
from edgebench.records.events import EventsLike, Idle, as_events, first
from edgebench.records.result import EstimatedEnergy, GpuUtil, MeasuredEnergy, RailEnergy
from edgebench.records.trial import Trial
from edgebench.sensors.samples import Samples


def idle_window(events: EventsLike) -> tuple[int, int] | None:
    idle = first(as_events(events), Idle)
    return (idle.start_ns, idle.end_ns) if idle else None


def _none_if_nan(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def gpu_util(samples: Samples | None, t0: int, t1: int) -> GpuUtil | None:
    """Per-GPU utilization over ``[t0, t1]``; None where no GPU was sampled."""
    if samples is None or len(samples) < 2:
        return None
    per_gpu = gpu_utilization_pct(samples, t0, t1)
    if not per_gpu:
        return None
    known = [u for u in per_gpu if not math.isnan(u)]
    return GpuUtil(per_gpu=[_none_if_nan(u) for u in per_gpu], mean=sum(known) / len(known) if known else None)


def per_step_and_sample(energy_j: float, steps: int, batch_size: int) -> tuple[float, float]:
    """The MNN-based suite's ``singleBatch`` and ``singleSample`` figures: ``E / steps``, ``E / (steps * batch)``."""
    return energy_j / steps, energy_j / (steps * batch_size)


def measured_energy(
    trial: Trial, events: EventsLike, samples: Samples | None, t0: int, t1: int, steps: int
) -> MeasuredEnergy:
    """What a power sensor measured over ``[t0, t1]`` (nothing but the idle window's length without one)."""
    idle = idle_window(events)
    idle_window_s = (idle[1] - idle[0]) / 1e9 if idle else None
    figures = device_energy(samples, t0, t1, idle) if samples is not None and len(samples) >= 2 else None
    if figures is None or samples is None:
        return MeasuredEnergy(idle_window_s=idle_window_s)
    interval = energy_interval(samples, figures, t0, t1, idle)
    notes = [*figures.notes, *interval.notes]
    energy_j: float | None = figures.active_j
    per_step: float | None
    per_sample: float | None
    per_step, per_sample = per_step_and_sample(figures.active_j, steps, trial.batch_size)
    if interval.refused is not None:  # the window cannot resolve it: no figure is claimed
        energy_j = per_step = per_sample = None
        notes.insert(0, f"energy_j not claimed: {interval.refused}")
    return MeasuredEnergy(
        energy_j=energy_j,
        energy_ci95_j=interval.ci95_j,
        source_refresh_s=interval.refresh_s,
        per_step_j=per_step,
        per_sample_j=per_sample,
        gross_j=figures.gross_j,
        window_s=figures.window_s,
        idle_power_w=figures.idle_power_w,
        idle_window_s=idle_window_s,
        avg_power_w=figures.avg_power_w,
        source=figures.source,
        by_rail={
            name: RailEnergy(
                energy_j=r.active_j,
                gross_energy_j=r.gross_j,
                avg_power_w=r.avg_power_w,
                idle_power_w=r.idle_power_w,
            )
            for name, r in figures.rails.items()
        },
        notes=notes or None,
    )


def estimated_energy(
    trial: Trial,
    t0: int,
    t1: int,
    steps: int,
    cpu_util_mean_pct: float | None,
    gpu_util_mean_pct: float | None = None,
) -> EstimatedEnergy | None:
    """The power model's figures over ``[t0, t1]`` (``--estimate-energy``); None when none was asked for or the
    CPU's utilization is unknown.  ``cpu_util_mean_pct`` is the worker's own CPU time over the device's cores
    (``measure.trial``), never the cores' total, which other processes' load would inflate."""
    if not trial.estimate_energy or cpu_util_mean_pct is None:
        return None
    model = parse_power_model(trial.estimate_energy)
    estimate = estimate_energy(model, cpu_util_mean_pct, (t1 - t0) / 1e9, gpu_util_mean_pct)
    per_step, per_sample = per_step_and_sample(estimate.active_j, steps, trial.batch_size)
    return EstimatedEnergy(
        power_model=estimate.model,
        energy_j=estimate.active_j,
        per_step_j=per_step,
        per_sample_j=per_sample,
        avg_power_w=estimate.avg_power_w,
        idle_power_w=estimate.idle_power_w,
        cpu_util_pct=cpu_util_mean_pct,
    )
