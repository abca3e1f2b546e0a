"""The record of one trial: what ``--json`` prints and what the store keeps.

A result holds the :class:`Trial` it ran (placement resolved) and groups its figures by what they measure, as Zeus
and optimum-benchmark group theirs: ``latency``, ``memory``, ``cpu``, ``energy`` (measured only),
``estimated_energy`` (a power model's, of its own type), ``accuracy``, ``device``.  Every figure's unit is in its
name.  The field names are a contract: later versions add fields; a rename raises ``schema_version``, and
:mod:`edgebench.records.result_schema` carries every older record forward (and documents each move).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidatorFunctionWrapHandler, field_validator

from edgebench.records.device import DeviceEnvironment
from edgebench.records.lm import LanguageModel
from edgebench.records.memory import MemoryByCategory
from edgebench.records.model import Record
from edgebench.records.quantization import Quantization
from edgebench.records.trial import Trial

SCHEMA_VERSION = 4

#: ``killed``: the worker died of a signal the out-of-memory killer did not send (see
#: :mod:`edgebench.agents.python.oom`).
Status = Literal["ok", "crashed", "oom", "timeout", "infeasible", "error", "killed"]


class Stats(Record):
    """Distribution of per-step times in ms; ``ci95`` is the half-width of the 95% t-interval of the mean.

    Only the mean is known of a trial imported from a tool that kept nothing else (the MNN-based suite prints one
    mean latency): there the other figures are None, not made up.
    """

    mean: float
    median: float | None = None
    p5: float | None = None
    p95: float | None = None
    std: float | None = None
    ci95: float | None = None
    n: int
    cv: float | None = None


class CpuUtil(Record):
    """Per-core utilization in percent (None for a core that was offline) and its mean over online cores."""

    per_core: list[float | None]
    mean: float | None


class Range(Record):
    mean: float
    max: float


class LossSummary(Record):
    """The first and last training loss.  A loss that was not finite (a diverged run: NaN, inf) is stored as None,
    since JSON has no NaN (it was written as null and then refused on reading, making the store unreadable)."""

    first: float | None
    last: float | None
    finite: bool

    @field_validator("first", "last", mode="before")
    @classmethod
    def _finite_or_none(cls, value: float | None) -> float | None:
        return value if value is None or math.isfinite(value) else None


class SamplerSummary(Record):
    interval_ms: float
    samples: int
    late_samples: int
    cpu_pct_of_core: float
    sensors: list[str]
    unavailable: dict[str, str]
    #: ``python``, ``sh`` or ``native`` (see :class:`~edgebench.records.sampling.SamplerMeta`); None in records
    #: stored before it was kept.
    kind: str | None = None
    #: Why that sampler ran (the native build, or why the native one did not).
    why: str | None = None


class RailEnergy(Record):
    """One power channel (a rail, a RAPL domain, a GPU) over the training window."""

    #: idle-subtracted where an idle baseline was measured, like ``energy_j``
    energy_j: float
    gross_energy_j: float
    avg_power_w: float
    idle_power_w: float | None


class GpuUtil(Record):
    """Per-GPU utilization in percent over the training window (equation 3) and its mean."""

    per_gpu: list[float | None]
    mean: float | None


class SweepInfo(Record):
    """Where a trial sits in a sweep: the sweep, its stable key there, and what was done to the device before it."""

    sweep_id: str
    #: The executor's name for the host that ran it: this machine's hostname on the local executor, the fleet
    #: host's name on Ray (``edgebench fleet join --name``), which need not be its ``device.hostname``.
    host: str | None = None
    trial_key: str
    position: int
    #: Frequency each cpufreq policy was pinned to for this trial (kHz), when the sweep set one.
    freq_set_khz: dict[str, int] | None = None
    #: How long the sweep cooled the device down before this trial, and by which rule.
    cooldown_s: float = 0.0
    cooldown_by: str | None = None


class Repeat(Record):
    """Which independent repeat of its configuration a trial is (``--repeats``): each repeat is a trial of the same
    :class:`Trial` in a fresh worker process, so the spread between repeats is the run-to-run variance one process
    cannot see (memory layout, clock, neighbours).  The repeats of a configuration within one sweep (or plan) are its
    repeat group: they share the sweep and ``config_key``."""

    #: The configuration's key (:func:`~edgebench.records.trial.configuration_key`), the same for each repeat.
    config_key: str
    #: 0 for the first repeat.
    index: int
    #: The repeats planned for the configuration when this one ran (``auto`` plans more as the spread asks).
    planned: int
    #: The seed of the random order the run interleaved its configurations' repeats in; None: run in the plan's
    #: order (one configuration, or one repeat each).
    order_seed: int | None = None


class AccuracyPoint(Record):
    """One evaluation on held-out data: after ``step`` measured steps, ``elapsed_s`` after the first step began."""

    step: int
    accuracy: float
    elapsed_s: float


class Predictability(Record):
    """How repeatable the training steps are (the characterization paper's Observation 2).

    ``steps_for_ci_*`` is the smallest number of steps whose 95% interval of the mean step time is within
    +/-1% (+/-5%) of the mean at the measured coefficient of variation.  ``utilization_periodicity`` is, per core
    the trial ran on, the autocorrelation of that core's utilization series (one value per sampling interval) at a
    lag of one mean step period: 1 = the pattern repeats every step, 0 = no relation, None with
    ``periodicity_note`` saying why when it cannot be measured (e.g. a step shorter than two sampling intervals).
    """

    step_time_cv: float
    steps_for_ci_1pct: int | None = None
    steps_for_ci_5pct: int | None = None
    step_period_ms: float
    utilization_periodicity: list[float | None] | None = None
    utilization_periodicity_mean: float | None = None
    periodicity_note: str | None = None


class SeriesPeriodicity(Record):
    """:class:`Predictability`'s autocorrelation at one step period, of each GPU's utilization (``gpu0``) and of
    each power rail (``VDD_GPU``...) as sampled (Observation 7: they repeat with the step too); None per series
    where it cannot be measured, ``note`` saying why."""

    gpu: dict[str, float | None] | None = None
    power: dict[str, float | None] | None = None
    note: str | None = None


class TraceSummary(Record):
    """What ``--trace`` recorded; the spans themselves are the stored ``spans`` series."""

    granularity: Literal["layers", "ops"]
    spans: int
    labels: int
    #: Share of the measured steps' time inside some traced span (the rest: loss, optimizer, framework).
    covered_pct: float


class ThrottleSpan(Record):
    """A stretch of training during which one cpufreq policy was busy, clocked below 95% of its reference clock
    and the device at or above ``Throttling.hot_c`` (``measure.throttling``, the monitor's rule)."""

    policy: str
    cores: list[int]
    #: Since the first measured step.
    start_s: float
    duration_s: float
    min_freq_khz: float
    reference_khz: int
    max_temp_c: float


class Throttling(Record):
    """Thermal throttling over the measured steps, in 1 s windows; empty ``episodes``: none seen."""

    hot_c: float
    episodes: list[ThrottleSpan]
    #: Time any policy was throttled (overlapping episodes of two policies count once).
    throttled_s: float


class _Group(Record):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ZoneTrip(_Group):
    """One thermal zone's temperature against its first (lowest) ``passive`` trip point, both in degrees C."""

    zone: str
    temp_c: float
    passive_trip_c: float


class Hygiene(_Group):
    """Whether the device was quiet and the steps steady over the measured window (``measure.hygiene``).

    ``other_cpu_pct``: share of the trial's cores' time other processes used (their active ticks less the
    worker's own); ``step_cv``: the step times' coefficient of variation; ``step_modes_ms``: the medians of two
    modes where the steps fall into two; ``clock_moved``: the cores' sampled frequency spread over 5% of its
    highest (``clock_range_khz``); ``thermal_status_*``: the status a phone reported at the trial's start and end
    (2, moderate, and above: it throttles); ``run_queue_wait_pct`` and ``involuntary_switches_per_s``: how much the
    scheduler kept the worker's threads from a CPU (contention at any window's length).  Each None where the records
    cannot tell.  ``warning``: the one line every table showing the trial prints, None for a trial that passed every
    check.
    """

    other_cpu_pct: float | None = None
    step_cv: float | None = None
    step_modes_ms: list[float] | None = None
    clock_moved: bool | None = None
    clock_range_khz: list[float] | None = None
    #: The thermal status the phone reported (Android's ``THERMAL_STATUS_*``: 0 none, 1 light, 2 moderate, 3 severe,
    #: 4 critical, 5 emergency, 6 shutdown) before and after the trial; None where the device reports none.
    thermal_status_start: int | None = None
    thermal_status_end: int | None = None
    #: A board's thermal zones (no Android thermal service): the zone nearest its first (lowest) passive trip point
    #: before and after the trial; at or above it the kernel throttles.  None where no zone has a passive trip.
    zone_trip_start: ZoneTrip | None = None
    zone_trip_end: ZoneTrip | None = None
    #: The worker's threads' time waiting on a run queue, in percent of the time they were runnable (on a CPU or
    #: waiting for one), from the kernel's per-thread scheduler counters (``/proc/<pid>/task/*/schedstat``):
    #: contention measured to the nanosecond, so it shows over windows too short for ``other_cpu_pct``'s ticks.
    run_queue_wait_pct: float | None = None
    #: The same wait's length, summed over the threads (ms): under ``measure.hygiene.MIN_BUSY_WAIT_MS`` a large share
    #: is one wake-up's latency on a short window, not a busy neighbour.
    run_queue_wait_ms: float | None = None
    #: How often per second of the window one of the worker's threads was taken off a CPU it still wanted
    #: (``nonvoluntary_ctxt_switches`` of ``/proc/<pid>/task/*/status``).
    involuntary_switches_per_s: float | None = None
    #: Why nothing could tell whether the device was quiet (a window shorter than the tick counters resolve, and
    #: no scheduler counters read); None where something could.
    quiet_unknown: str | None = None
    warning: str | None = None


class Workload(_Group):
    """The model as the backend built it: the input it ran at (a preset's, or the trial's own) and its size."""

    input_shape: list[int] | None = None
    num_classes: int | None = None
    params: int | None = None


class Latency(_Group):
    """Step times of the measured phase and of the inference passes timed after training.

    ``step_ms`` is the measured steps: training steps, or forward passes for an inference trial (then ``infer_ms``
    is the same passes).  ``measured_steps`` counts them, also for a trial that failed part-way (no ``step_ms``).
    """

    step_ms: Stats | None = None
    infer_ms: Stats | None = None
    #: Samples per second over the measured steps; None where their times summed to 0 (a coarse clock).
    throughput_sps: float | None = None
    measured_steps: int | None = None


class Memory(_Group):
    """Peak memory of the worker: over the measured steps (``peak_source`` says how it was read), over the
    inference passes, of torch's CUDA allocator, and its virtual size over its life (``VmPeak``, the MNN suite's
    ``VIRT``).  The budget it was allowed is the trial's ``memory_budget_bytes``."""

    peak_bytes: int | None = None
    peak_source: str | None = None
    infer_peak_bytes: int | None = None
    gpu_peak_bytes: int | None = None
    virtual_peak_bytes: int | None = None
    #: What the memory holds (parameters, gradients, optimizer state, input, saved activations, runtime), measured.
    by_category: MemoryByCategory | None = None


class ColdStart(_Group):
    """The first use of the model, as an app that loads it meets it: the model's load and the first step after it,
    in the trial's fresh worker process (every trial starts its own; the framework is imported before the load is
    timed, and the model file may be in the page cache).  See docs/guide/measured.md, "Cold start".

    ``model_load_*``: the backend's load section, ``model_load_what`` naming it (ORT's ``InferenceSession``, MNN's
    interpreter and session, torch's model construction and move to the device); the peak is the process's resident
    peak over it (``VmHWM``), ``model_load_added_memory_bytes`` its rise above what was resident before the load.
    ``first_step_ms``: the first step of the trial's mode (``first_step_mode``: a training step, or an inference
    for an inference trial) after the load, run without the hooks that instrument later steps; the idle baseline
    may run between the two.  ``first_step_counted_as`` says which phase's step 0 it was (``warmup``,
    ``train``/``infer``), ``extra`` for a step run only to time it, ``command`` for a ``--command`` workload: from
    the command's start to its first step line, the tool's own start and load included.
    """

    model_load_s: float | None = None
    model_load_peak_memory_bytes: int | None = None
    model_load_added_memory_bytes: int | None = None
    model_load_what: str | None = None
    first_step_ms: float | None = None
    first_step_mode: Literal["train", "infer"] | None = None
    first_step_counted_as: Literal["warmup", "infer_warmup", "train", "infer", "extra", "command"] | None = None
    #: What limits these figures (a peak that could not be reset, a tool that prints no per-step lines).
    notes: list[str] | None = None


class Cpu(_Group):
    """The CPU over the measured steps: utilization per core, the idle ratio per core (0-1), the worker's CPU time
    (100 = one core) over the measured steps and over the inference passes, and the mean clock per core."""

    util_pct: CpuUtil | None = None
    idle_ratio: list[float | None] | None = None
    process_pct: float | None = None
    infer_process_pct: float | None = None
    freq_khz: list[float | None] | None = None
    #: The frequency each cpufreq policy of the trial's cores was set to, read back after setting it (kHz): the
    #: nearest the policy offers to the trial's ``freq_khz`` (the lower of two as near), which is what was asked.
    #: None: not set.
    freq_applied_khz: dict[str, int] | None = None
    #: ``--counters``: each Linux perf event's mean count per measured step (``task-clock`` in ns), by perf's name.
    perf_counters_per_step: dict[str, float] | None = None
    #: ``--counters`` on a ``--command`` trial: each perf event's count over the command's whole run, exec to exit
    #: (its start-up and everything after the last step included), by perf's name.
    perf_counters_run: dict[str, float] | None = None


class MeasuredEnergy(_Group):
    """Energy a power sensor measured over the measured steps.  Only a sensor fills this group: ``kind`` is fixed,
    and a ``source`` naming an estimate is refused, so a power model's figures can never be stored here."""

    kind: Literal["measured"] = "measured"
    #: Energy of the window above the idle baseline (E_window - P_idle * T); without a baseline, E_window itself.
    energy_j: float | None = None
    per_step_j: float | None = None
    per_sample_j: float | None = None
    #: E_window before idle subtraction, and the window's length.
    gross_j: float | None = None
    window_s: float | None = None
    #: The idle baseline's power and length (the length is known wherever an idle window ran, sensor or not).
    idle_power_w: float | None = None
    idle_window_s: float | None = None
    avg_power_w: float | None = None
    #: Which sensor and channels measured it, e.g. ``jetson_power: VDD_IN (power samples)``.
    source: str | None = None
    #: Half-width of energy_j's 95% interval (source resolution and refresh period, window, idle spread), and the
    #: source's refresh period (the median time between two changes of its value); see measure/energy_error.py.
    energy_ci95_j: float | None = None
    source_refresh_s: float | None = None
    by_rail: dict[str, RailEnergy] | None = None
    notes: list[str] | None = None
    #: How energy was (or was not) measured, the sampler's rate and how long the device rested before the measured
    #: steps (the idle baseline, and a sweep's cool-down): the MLCommons power proposals' fields, under their names.
    measurement_method: str | None = None
    sampling_rate_hz: float | None = None
    thermal_stabilization_seconds: float | None = None

    @field_validator("source")
    @classmethod
    def _measured_source(cls, source: str | None) -> str | None:
        if source is not None and source.startswith(ESTIMATED):
            raise ValueError(f"{source!r} is an estimate; it belongs in estimated_energy, never with measurements")
        return source


#: How every estimate's label begins, wherever it is shown.
ESTIMATED = "estimated:"


class EstimatedEnergy(_Group):
    """The same quantities from a utilization power model (``--estimate-energy``): another type than
    :class:`MeasuredEnergy`, so neither can be put where the other goes."""

    kind: Literal["estimated"] = "estimated"
    #: The power model, as it describes itself (``linear-utilization: P = 2.7 W + (6.4 W - 2.7 W) * U_cpu``).
    power_model: str
    energy_j: float | None = None
    per_step_j: float | None = None
    per_sample_j: float | None = None
    avg_power_w: float | None = None
    idle_power_w: float | None = None
    #: The ``U_cpu`` the model was applied at: the worker's own CPU time as a share of the device's cores (percent;
    #: never the cores' total, which counts other processes).  None in records stored before it was kept.
    cpu_util_pct: float | None = None

    @property
    def source(self) -> str:
        """The label every display of the estimate carries."""
        return f"{ESTIMATED} {self.power_model}"


class Accuracy(_Group):
    """Time to accuracy (``--until-accuracy``, the target is the trial's ``until_accuracy``): whether it was
    reached and at what cost.  Time runs from the first training step (warm-up included) to the end of the
    evaluation that reached the target, evaluations included (as MLPerf Training times it); steps and samples count
    warm-up steps too; ``energy_j`` is measured over that span (None without a power sensor, never estimated)."""

    reached: bool
    final: float | None = None
    time_s: float | None = None
    steps: int | None = None
    samples: int | None = None
    energy_j: float | None = None
    eval_time_s: float | None = None
    curve: list[AccuracyPoint] | None = None


class TrialResult(Record):
    """One trial's measurements.  Frozen, and unknown keys are refused: a misspelled field is an error where it is
    made, never a silently stored extra."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    trial_id: str
    status: Status
    reason: str | None = None
    #: The trial as it ran: cores and threads resolved for the device.
    trial: Trial
    started_at: str | None = None
    #: Which rule ended the measured phase, e.g. ``fixed: 20 steps``.
    stopped_by: str | None = None
    #: Where the trial ran, as the user named it: ``local``, ``ssh://host``, ``adb://SERIAL`` or a configured name.
    target: str = "local"
    #: Where an imported trial came from (``mnn-suite:MEIZU_Freq_1708800``); None for a trial edgebench ran.  An
    #: imported trial holds what that tool measured and nothing else.
    imported_from: str | None = None
    sweep: SweepInfo | None = None
    #: Which repeat of its configuration this trial is (None: a trial run once, outside ``--repeats``).
    repeat: Repeat | None = None
    #: What distorts this measurement, each with its number (threads beyond the cores, a sampler taking much of a
    #: core); null when nothing did.
    measurement_notes: list[str] | None = None
    workload: Workload = Field(default_factory=Workload)
    latency: Latency = Field(default_factory=Latency)
    memory: Memory = Field(default_factory=Memory)
    cpu: Cpu = Field(default_factory=Cpu)
    energy: MeasuredEnergy = Field(default_factory=MeasuredEnergy)
    #: Asked for with ``--estimate-energy`` (None otherwise).
    estimated_energy: EstimatedEnergy | None = None
    #: ``--until-accuracy`` trials only.
    accuracy: Accuracy | None = None
    device: DeviceEnvironment = Field(default_factory=DeviceEnvironment)
    gpu_util_pct: GpuUtil | None = None
    series_periodicity: SeriesPeriodicity | None = None
    temperature_c: dict[str, Range] | None = None
    loss: LossSummary | None = None
    sampler: SamplerSummary | None = None
    predictability: Predictability | None = None
    #: Other load, step dispersion and clock stability over the measured window (None: stored before it existed).
    hygiene: Hygiene | None = None
    #: What ``--trace`` recorded (the trial's ``trace`` is the granularity asked for).
    trace_summary: TraceSummary | None = None
    #: None where the device exposes no CPU frequency or temperature (nothing to tell throttling by).
    throttling: Throttling | None = None
    #: The model's load and the first step after it (None: stored before it was recorded).
    cold_start: ColdStart | None = None
    #: ``int8`` trials: how the model was quantized and its accuracy change against fp32 (None otherwise).
    quantization: Quantization | None = None
    #: A language model's own figures: tokens per second, energy per token, held-out loss over steps, time to first
    #: token and decode speed per context length (None for other models).
    language_model: LanguageModel | None = None

    @field_validator("trial", mode="wrap")
    @classmethod
    def _trial_as_recorded(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """A stored trial is read as it was recorded, not checked again: it was checked when it ran, and a result
        must still load after a check was added or a model renamed (a record's own after-validators would run
        again even on an instance, so neither goes through the handler)."""
        if isinstance(value, dict):
            return stored_trial(value)
        return value if isinstance(value, Trial) else handler(value)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def applied_freq_khz(self) -> int | None:
        """The frequency the trial's cores ran at where it was set: the policies' applied frequency (the one most of
        them got, the lower on a tie), else the one asked (a record from before the applied one was kept)."""
        applied = list((self.cpu.freq_applied_khz or {}).values())
        if not applied:
            return self.trial.freq_khz
        return min(set(applied), key=lambda khz: (-applied.count(khz), khz))


#: Trial fields held as tuples; JSON carries them as lists.
_TUPLES = tuple(name for name, f in Trial.model_fields.items() if "tuple" in str(f.annotation))


def stored_trial(fields: dict[str, Any]) -> Trial:
    """A :class:`Trial` from its stored fields, as recorded: defaults filled, lists back to tuples, nothing
    looked up."""
    known = {k: v for k, v in fields.items() if k in Trial.model_fields}
    unknown = fields.keys() - known.keys()
    if unknown:
        raise ValueError(f"unknown trial fields: {', '.join(sorted(unknown))}")
    for name in _TUPLES:
        if isinstance(known.get(name), list):
            known[name] = tuple(known[name])
    return Trial.model_construct(**known)
