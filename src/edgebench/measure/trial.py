"""From a trial's bundle (the worker's events, the sampler's samples) to a :class:`TrialResult`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np

from edgebench.measure.accuracy import accuracy_group, energy_to_accuracy_j
from edgebench.measure.attribution import trace_summary
from edgebench.measure.budget import budget_outcome
from edgebench.measure.cold_start import cold_start
from edgebench.measure.energy import estimated_energy, gpu_util, measured_energy
from edgebench.measure.hygiene import hygiene
from edgebench.measure.lm import language_model
from edgebench.measure.notes import command_counters_note
from edgebench.measure.predictability import predictability, step_series_periodicity
from edgebench.measure.stats import summarize
from edgebench.measure.throttling import covered_ns, episodes_between
from edgebench.measure.utilization import (
    INFER_CPU,
    TRAIN_CPU,
    checked_cpu_share_pct,
    core_ids,
    idle_ratio,
    mean_utilization_pct,
    per_core_utilization_pct,
    process_cpu_s,
)
from edgebench.records.bundle import TrialBundle
from edgebench.records.device import DeviceEnvironment
from edgebench.records.events import (
    UNWATCHED_ENV,
    Done,
    Error,
    Event,
    EventsLike,
    Ready,
    Step,
    as_events,
    first,
    measured_phase,
    steps_of,
)
from edgebench.records.launch import LaunchContext
from edgebench.records.result import (
    Cpu,
    CpuUtil,
    Latency,
    LossSummary,
    MeasuredEnergy,
    Memory,
    Range,
    SamplerSummary,
    Stats,
    Status,
    SweepInfo,
    ThrottleSpan,
    Throttling,
    TrialResult,
    Workload,
)
from edgebench.records.spans import SpanTable
from edgebench.records.throttle import ThrottleReference
from edgebench.records.trial import Trial
from edgebench.sensors import android_thermal
from edgebench.sensors.samples import Samples, parse_samples
from edgebench.sensors.thermal_trips import ENV_END as TRIPS_END
from edgebench.sensors.thermal_trips import ENV_START as TRIPS_START
from edgebench.sensors.thermal_trips import nearest_trip


def durations_ms(steps: Sequence[Step]) -> np.ndarray:
    return np.array([(s.end_ns - s.start_ns) / 1e6 for s in steps], dtype=np.float64)


def measure(bundle: TrialBundle, trial_id: str, context: LaunchContext | None = None) -> TrialResult:
    """The result of a bundled trial: measured when it ran to its end, else failed with its status and reason;
    ``context`` (where it ran, its place in a sweep, its repeat, the clocks pinned for it) is recorded with it."""
    trial, events, meta = bundle.trial, bundle.events, bundle.sampler_meta
    if bundle.failure is None:
        samples = parse_samples(bundle.samples_csv, meta) if meta and bundle.samples_csv is not None else None
        result = build_result(trial, trial_id, events, samples, bundle.env, bundle.throttle_reference, context)
        if bundle.spans_json is not None:
            summary = trace_summary(SpanTable.from_json(bundle.spans_json), events)
            result = result.model_copy(update={"trace_summary": summary})
        return result
    status, reason, peak = bundle.failure.status, bundle.failure.reason, None
    if trial.memory_budget_bytes is not None:
        error = first(events, Error)
        worker_peak = error.peak_memory_bytes if error else None
        status, reason, peak = budget_outcome(status, reason, trial.memory_budget_bytes, bundle.watch, worker_peak)
    result = failed_result(trial, trial_id, status, reason, events, bundle.env, context)  # type: ignore[arg-type]
    if peak is not None:
        memory = result.memory.model_copy(update={"peak_bytes": peak, "peak_source": "vmhwm"})
        result = result.model_copy(update={"memory": memory})
    return result


def _base(
    trial: Trial, trial_id: str, env: dict[str, Any], events: list[Event], context: LaunchContext | None
) -> dict[str, Any]:
    """What every result of ``trial`` holds, whether it ran to its end or not."""
    ready = first(events, Ready) or Ready()
    context = context or LaunchContext()
    return {
        "target": context.target,
        "sweep": context.sweep,
        "repeat": context.repeat,
        "trial_id": trial_id,
        "trial": trial,
        "quantization": ready.quantization,
        "workload": Workload(input_shape=ready.input_shape, num_classes=ready.num_classes, params=ready.params),
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "device": DeviceEnvironment.from_env(
            {
                k: v
                for k, v in {**env, **ready.env}.items()
                if k not in (android_thermal.ENV_START, android_thermal.ENV_END)
            }
        ),
        "accuracy": accuracy_group(trial, events),
        "measurement_notes": _thread_notes(trial),
        "cold_start": cold_start(trial, events),
    }


def _thread_notes(trial: Trial) -> list[str] | None:
    from edgebench.measure.notes import thread_oversubscription

    if trial.threads is None or not trial.cores:
        return None
    try:
        note = thread_oversubscription(trial.threads, len(trial.cores))
    except ValueError as exc:  # refused before it ran; a result built anyway says why it is suspect
        note = str(exc)
    return [note] if note else None


def _sampler_notes(sampler: SamplerSummary | None) -> list[str]:
    from edgebench.measure.notes import SAMPLER_CPU_NOTE_PCT

    if sampler is None or sampler.cpu_pct_of_core < SAMPLER_CPU_NOTE_PCT:
        return []
    return [
        f"the sampler took {sampler.cpu_pct_of_core:.0f}% of a core at a {sampler.interval_ms:g} ms period, competing "
        "with the trial for CPU; a longer --interval disturbs less"
    ]


def failed_result(
    trial: Trial,
    trial_id: str,
    status: Status,
    reason: str,
    events: EventsLike,
    env: dict[str, Any],
    context: LaunchContext | None = None,
) -> TrialResult:
    """A trial that did not run to its end; ``stopped_by`` says what ended the measured phase and after how many
    of its steps, so no summary claims steps that were never measured."""
    events = as_events(events)
    measured = len(steps_of(events, measured_phase(trial.mode)))
    stopped_by = f"{status} after {measured} measured step{'' if measured == 1 else 's'}"
    return TrialResult(
        status=status,
        reason=reason,
        stopped_by=stopped_by,
        latency=Latency(measured_steps=measured),
        cpu=Cpu(freq_applied_khz=context.freq_applied_khz if context else None),
        **_base(trial, trial_id, env, events, context),
    )


def _mean_or_none(values: np.ndarray) -> float | None:
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else None


def _finite(values: list[float]) -> list[float | None]:
    """NaN (no reading) becomes None, which JSON can carry."""
    return [None if math.isnan(v) else v for v in values]


def _window(samples: Samples, t0: int, t1: int) -> np.ndarray:
    """Samples inside [t0, t1] plus one on each side, so a window shorter than the period still has readings."""
    lo = max(int(np.searchsorted(samples.t_ns, t0)) - 1, 0)
    hi = min(int(np.searchsorted(samples.t_ns, t1, side="right")) + 1, len(samples.t_ns))
    return np.arange(lo, hi)


def build_result(
    trial: Trial,
    trial_id: str,
    events: EventsLike,
    samples: Samples | None,
    env: dict[str, Any],
    throttle_reference: ThrottleReference | None = None,
    context: LaunchContext | None = None,
) -> TrialResult:
    """The measurements of a trial that ran to its end, from its step events and its sensor samples.

    An inference trial (``mode="infer"``) measured forward passes: ``step_time_ms`` and ``infer_time_ms`` are both
    their times, ``throughput_sps`` inferred samples per second, and memory, CPU, energy (per step = per forward
    pass) and predictability are over those passes, exactly as they are over training steps for a training trial.

    ``throttle_reference`` (the device's clocks and hot threshold at the trial's start) adds ``throttling``.
    """
    events = as_events(events)
    train = steps_of(events, measured_phase(trial.mode))
    done = first(events, Done)
    assert done is not None, "a trial that ran to its end has a done event"
    step_ms = durations_ms(train)
    fields = _base(trial, trial_id, env, events, context)
    notes: list[str] = fields.pop("measurement_notes") or []
    # Steps shorter than the clock's resolution (a --command workload stamped on /proc/uptime's 10 ms) sum to 0:
    # the throughput is then unknown, not infinite.
    total_s = step_ms.sum() / 1e3
    told = {**env, **(first(events, Ready) or Ready()).env}
    mean_only = told.get("step_times") == "mean only"
    batch = workload_batch_size(trial, told)
    if batch is None:
        notes.append(
            "no throughput: a --command workload's batch size is its own, not edgebench's default "
            f"{trial.batch_size}; give --batch-size to have samples/s"
        )
    counted = not mean_only or told.get("step_count") != "not printed"
    latency = Latency(
        step_ms=mean_only_stats(step_ms) if mean_only else summarize(step_ms),
        throughput_sps=batch * len(step_ms) / total_s if total_s > 0 and batch is not None else None,
        measured_steps=len(step_ms) if counted else None,
    )
    if not counted:
        notes.append("the tool printed its mean step time but not how many steps it averages: one figure, no count")
    if trial.command is not None and batch is not None and batch != trial.batch_size:
        fields["trial"] = trial.model_copy(update={"batch_size": batch})  # the batch the workload printed it ran
    cpu: dict[str, Any] = {"freq_applied_khz": context.freq_applied_khz if context else None}
    n_cores = _cores_of(trial, fields["device"])
    infer = steps_of(events, "infer")
    if infer:
        latency = latency.model_copy(update={"infer_ms": summarize(durations_ms(infer))})
        if done.infer_cpu_s is not None:
            window_s = done.infer_cpu_window_s or (infer[-1].end_ns - infer[0].start_ns) / 1e9
            share, note = checked_cpu_share_pct(done.infer_cpu_s, window_s, n_cores, INFER_CPU)
            cpu["infer_process_pct"] = share
            notes += [note] if note else []
    memory: dict[str, Any] = {
        "peak_bytes": done.train_peak_memory_bytes,
        "peak_source": "vmhwm",
        "infer_peak_bytes": done.infer_peak_memory_bytes,
        "gpu_peak_bytes": done.gpu_peak_memory_bytes,
        "virtual_peak_bytes": done.virtual_memory_peak_bytes,
        "by_category": done.memory_by_category,
    }
    losses = [s.loss for s in steps_of(events, "warmup") + train if s.loss is not None]
    if losses:
        fields["loss"] = LossSummary(first=losses[0], last=losses[-1], finite=all(map(math.isfinite, losses)))
    t0, t1 = train[0].start_ns, train[-1].end_ns
    if samples is not None and len(samples) >= 2:
        sampled = _from_samples(samples, t0, t1, n_cores)
        notes += sampled.pop("notes")
        cpu.update(sampled.pop("cpu"))
        fields.update(sampled)
        if throttle_reference is not None:
            fields["throttling"] = trial_throttling(samples, t0, t1, throttle_reference)
        if memory["peak_bytes"] is None and "proc_rss_bytes" in samples.columns:
            rss = samples.columns["proc_rss_bytes"][_window(samples, t0, t1)]
            if not np.isnan(rss).all():
                memory["peak_bytes"], memory["peak_source"] = int(np.nanmax(rss)), "sampled_rss"
    if done.train_cpu_s is not None:  # the worker's own rusage: as fine as the kernel's accounting, not exact
        window_s = done.train_cpu_window_s or (t1 - t0) / 1e9
        share, note = checked_cpu_share_pct(done.train_cpu_s, window_s, n_cores, TRAIN_CPU)
        cpu["process_pct"] = share
        notes = [n for n in notes if not n.startswith(TRAIN_CPU)] + ([note] if note else [])
    if memory["peak_bytes"] is None:
        memory["peak_source"] = None
    counted = [s.counters for s in train if s.counters]
    if counted and len(counted) == len(train):
        cpu["perf_counters_per_step"] = {n: sum(c[n] for c in counted) / len(counted) for n in counted[0]}
    if done.counters:
        cpu["perf_counters_run"] = {n: float(v) for n, v in done.counters.items()}
        notes.append(command_counters_note(env.get("perf_counters_tool"), per_step="perf_counters_per_step" in cpu))
    fields["gpu_util_pct"] = gpu_util(samples, t0, t1)
    gpu_mean = fields["gpu_util_pct"].mean if fields["gpu_util_pct"] else None
    # The power model's U_cpu is the worker's own CPU time over the device's cores: the cores' mean utilization
    # (/proc/stat) counts every process, and on a busy device it modelled the neighbours' power as the trial's.
    cpu_share = None
    if trial.estimate_energy and cpu.get("process_pct") is not None:
        cpu_share = _process_share_of_device_pct(cpu["process_pct"], samples, fields["device"])
    fields["energy"] = with_method(measured_energy(trial, events, samples, t0, t1, len(step_ms)), trial, fields)
    fields["estimated_energy"] = estimated_energy(trial, t0, t1, len(step_ms), cpu_share, gpu_mean)
    accuracy = fields["accuracy"]
    if accuracy is not None and accuracy.time_s is not None and samples is not None:
        energy_j = energy_to_accuracy_j(trial, events, samples)
        fields["accuracy"] = accuracy.model_copy(update={"energy_j": energy_j})
    # One printed mean is not N steps: no dispersion, and so no predictability or periodicity, is made up from it.
    if not mean_only:
        fields["predictability"] = predictability(step_ms, samples, list(trial.cores or ()), t0, t1)
        fields["series_periodicity"] = step_series_periodicity(step_ms, samples, t0, t1)
    own_cpu_s = None  # the worker's rusage over the measured steps, scaled to [t0, t1]
    if done.train_cpu_s is not None and done.train_cpu_window_s:
        own_cpu_s = done.train_cpu_s * ((t1 - t0) / 1e9) / done.train_cpu_window_s
    thermal = (env.get(android_thermal.ENV_START), env.get(android_thermal.ENV_END))
    fields["hygiene"] = hygiene(
        step_ms, samples, list(trial.cores or ()), t0, t1, mean_only=mean_only, own_cpu_s=own_cpu_s,
        thermal_status=thermal, zone_trips=(nearest_trip(env.get(TRIPS_START)),
                                            nearest_trip(env.get(TRIPS_END))),
        sched=done.train_sched, threads=trial.threads,
    )  # fmt: skip
    notes += _sampler_notes(fields.get("sampler"))
    if told.get(UNWATCHED_ENV):
        notes.append(f"no CPU share, memory or scheduler waits of the program: {told[UNWATCHED_ENV]}")
    energy = fields["energy"]
    fields["language_model"] = language_model(trial, events, samples, train, energy.energy_j, energy.energy_ci95_j)
    return TrialResult(
        status="ok",
        stopped_by=done.stopped_by,
        latency=latency,
        memory=Memory(**memory),
        cpu=Cpu(**cpu),
        measurement_notes=notes or None,
        **fields,
    )


def with_method(energy: MeasuredEnergy, trial: Trial, fields: dict[str, Any]) -> MeasuredEnergy:
    """The MLCommons fields: how energy was measured (or that it was not), the sampler's rate, and the rest before
    the measured steps (the idle baseline; a sweep adds its cool-down)."""
    sampler: SamplerSummary | None = fields.get("sampler")
    sweep: SweepInfo | None = fields.get("sweep")  # its cool-down, waited before the trial, is rest too
    if energy.source is not None:
        method = f"on-device power sensor: {energy.source}"
    elif trial.estimate_energy:
        method = "not measured (no power sensor); estimated_energy holds a utilization power model's estimate"
    else:
        method = "not measured: no power sensor"
    return energy.model_copy(
        update={
            "measurement_method": method,
            "sampling_rate_hz": 1e3 / sampler.interval_ms if sampler is not None and sampler.interval_ms > 0 else None,
            "thermal_stabilization_seconds": (energy.idle_window_s or 0.0) + (sweep.cooldown_s if sweep else 0.0),
        }
    )


def workload_batch_size(trial: Trial, told: dict[str, Any]) -> int | None:
    """The workload's batch size: the trial's for edgebench's own models; for a ``--command`` workload the one the
    user gave, else the one its output printed (the MNN train demo's), else unknown (the default 32 is
    edgebench's, not the command's)."""
    if trial.command is None or "batch_size" in trial.model_fields_set:
        return trial.batch_size
    printed = told.get("batch_size")
    return printed if isinstance(printed, int) and not isinstance(printed, bool) and printed > 0 else None


def mean_only_stats(step_ms: np.ndarray) -> Stats:
    """What a tool that printed one mean over ``n`` steps tells: that mean and ``n``, nothing else."""
    return Stats(mean=float(step_ms.mean()), n=len(step_ms))


def _cores_of(trial: Trial, device: DeviceEnvironment) -> int:
    """How many cores the trial's worker could use: its resolved cores, else the device's, else one."""
    return len(trial.cores) if trial.cores else (device.cpu_count or 1)


def _process_share_of_device_pct(
    process_pct: float, samples: Samples | None, device: DeviceEnvironment
) -> float | None:
    """The process's CPU time as a share of every online core: the trial's own part of the device's mean
    utilization (the whole of it on a device that runs nothing else), which is what its power model charges it."""
    cores = len(core_ids(samples)) if samples is not None else 0
    cores = cores or device.cpu_count or 0
    return min(process_pct / cores, 100.0) if cores else None


def _from_samples(samples: Samples, t0: int, t1: int, n_cores: int) -> dict[str, Any]:
    """``cpu`` (the :class:`Cpu` group's sampled fields), ``sampler``, ``temperature_c`` over ``[t0, t1]`` and
    ``notes`` on figures withheld."""
    cpu: dict[str, Any] = {}
    out: dict[str, Any] = {"cpu": cpu, "notes": []}
    meta = samples.meta
    if samples.matching("cpu", "_active_ticks"):
        per_core = per_core_utilization_pct(samples, t0, t1)
        cpu["util_pct"] = CpuUtil(per_core=_finite(per_core), mean=_finite([mean_utilization_pct(per_core)])[0])
        cpu["idle_ratio"] = _finite(idle_ratio(samples, t0, t1))
    if meta is not None:
        share, note = checked_cpu_share_pct(
            *process_cpu_s(samples, t0, t1, meta.clk_tck),
            n_cores,
            TRAIN_CPU,
            tick_s=max(1.0 / meta.clk_tck, 0.01),
        )
        cpu["process_pct"] = share
        out["notes"] += [note] if note else []
        out["sampler"] = SamplerSummary(
            interval_ms=meta.interval_ms,
            samples=meta.samples,
            late_samples=meta.late_samples,
            cpu_pct_of_core=meta.cpu_pct_of_core,
            sensors=meta.sensors,
            unavailable=meta.unavailable,
            kind=meta.kind or None,
            why=meta.why,
        )
    rows = _window(samples, t0, t1)
    freq = samples.matching("cpu", "_freq_khz")
    if freq:
        by_core = sorted(freq.items(), key=lambda item: int(item[0][3:].split("_")[0]))
        cpu["freq_khz"] = [_mean_or_none(values[rows]) for _, values in by_core]
    temps = samples.matching("temp_", "_mc")
    if temps:
        summary = {}
        for column, values in temps.items():
            window = values[rows][~np.isnan(values[rows])]
            if len(window):
                label = samples.labels.get(column, column)
                summary[label] = Range(mean=float(window.mean()) / 1e3, max=float(window.max()) / 1e3)
        out["temperature_c"] = summary or None
    return out


def trial_throttling(samples: Samples, t0_ns: int, t1_ns: int, reference: ThrottleReference) -> Throttling | None:
    """Thermal throttling over the measured steps ``[t0_ns, t1_ns]``, times from ``t0_ns``; None where it cannot
    be told (no clock, no temperature or no reference clock)."""
    episodes = episodes_between(samples, t0_ns, t1_ns, reference)
    if episodes is None:
        return None
    found = [
        ThrottleSpan(
            policy=e.policy,
            cores=list(e.cores),
            start_s=(e.start_ns - t0_ns) / 1e9,
            duration_s=e.duration_s,
            min_freq_khz=e.min_freq_khz,
            reference_khz=e.max_khz,
            max_temp_c=e.max_temp_c,
        )
        for e in episodes
    ]
    return Throttling(hot_c=reference.hot_c, episodes=found, throttled_s=covered_ns(episodes) / 1e9)
