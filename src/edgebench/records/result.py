"""The record of one trial: what ``--json`` prints and what the store keeps.

The field names are a contract: later versions add fields, never rename them.  ``schema_version`` rises when the
shape changes and :func:`upgrade` brings older records forward.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 3

#: ``killed``: the worker died of a signal the out-of-memory killer did not send (see :mod:`edgebench.runner.oom`).
Status = Literal["ok", "crashed", "oom", "timeout", "infeasible", "error", "killed"]


class Stats(BaseModel):
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


class CpuUtil(BaseModel):
    """Per-core utilization in percent (None for a core that was offline) and its mean over online cores."""

    per_core: list[float | None]
    mean: float | None


class Range(BaseModel):
    mean: float
    max: float


class LossSummary(BaseModel):
    first: float
    last: float
    finite: bool


class SamplerSummary(BaseModel):
    interval_ms: float
    samples: int
    late_samples: int
    cpu_pct_of_core: float
    sensors: list[str]
    unavailable: dict[str, str]


class RailEnergy(BaseModel):
    """One power channel (a rail, a RAPL domain, a GPU) over the training window."""

    #: idle-subtracted where an idle baseline was measured, like ``energy_j``
    energy_j: float
    gross_energy_j: float
    avg_power_w: float
    idle_power_w: float | None


class GpuUtil(BaseModel):
    """Per-GPU utilization in percent over the training window (equation 3) and its mean."""

    per_gpu: list[float | None]
    mean: float | None


class SweepInfo(BaseModel):
    """Where a trial sits in a sweep: the sweep, its stable key there, and what was done to the device before it."""

    sweep_id: str
    trial_key: str
    position: int
    #: Frequency each cpufreq policy was pinned to for this trial (kHz), when the sweep set one.
    freq_set_khz: dict[str, int] | None = None
    #: How long the sweep cooled the device down before this trial, and by which rule.
    cooldown_s: float = 0.0
    cooldown_by: str | None = None


class AccuracyPoint(BaseModel):
    """One evaluation on held-out data: after ``step`` measured steps, ``elapsed_s`` after the first step began."""

    step: int
    accuracy: float
    elapsed_s: float


class Predictability(BaseModel):
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


class TraceSummary(BaseModel):
    """What ``--trace`` recorded; the spans themselves are the stored ``spans`` series."""

    granularity: Literal["layers", "ops"]
    spans: int
    labels: int
    #: Share of the measured steps' time inside some traced span (the rest: loss, optimizer, framework).
    covered_pct: float


class ThrottleSpan(BaseModel):
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


class Throttling(BaseModel):
    """Thermal throttling over the measured steps, in 1 s windows; empty ``episodes``: none seen."""

    hot_c: float
    episodes: list[ThrottleSpan]
    #: Time any policy was throttled (overlapping episodes of two policies count once).
    throttled_s: float


class Quantization(BaseModel):
    """What an ``int8`` trial ran and what it cost in accuracy, against the same model at fp32 on the same inputs.

    Never a speed claim: ``cpu_int8_features`` says whether the CPU has the instructions that make int8 fast
    (VNNI on x86, the dot product on Arm); the trial's own step times say whether it was.
    """

    #: The tool and scheme, e.g. ``onnxruntime.quantization.quantize_static, QDQ, per-channel weights``.
    method: str
    #: ``full``: weights and activations int8 (static); ``weight_only``: int8 weights, float compute.
    kind: Literal["full", "weight_only"]
    #: What calibrated the activation ranges: ``mnist: 256 real test images`` or ``synthetic: 64 seeded inputs``.
    calibration: str
    #: Whether the calibration and comparison inputs are real data (then ``*_accuracy`` are filled).
    real_data: bool
    #: How many inputs the fp32 / int8 comparison ran on.
    compared_samples: int
    #: Share of inputs whose top-1 class is the same at int8 as at fp32 (0-1).
    top1_agreement: float | None = None
    #: Held-out accuracy at fp32 and at int8 on those inputs, and the change (int8 - fp32); real data only.
    fp32_accuracy: float | None = None
    int8_accuracy: float | None = None
    accuracy_change: float | None = None
    #: Largest absolute difference of an output value between fp32 and int8.
    max_abs_output_diff: float | None = None
    #: int8 dot-product instructions this CPU has (``avx512_vnni``, ``avx_vnni``, ``asimddp``...); empty: none,
    #: so int8 runs on wider multiply-add sequences and may be no faster than fp32.
    cpu_int8_features: list[str] = []
    notes: list[str] | None = None


class TrialResult(BaseModel):
    """One trial's measurements.  Frozen, and unknown keys are refused: a misspelled field is an error where it is
    made, never a silently stored extra."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    trial_id: str
    status: Status
    reason: str | None = None
    model: str
    batch_size: int
    threads: int | None
    cores: list[int] | None
    steps: int
    warmup: int
    device: str = "cpu"
    input_shape: list[int] | None = None
    num_classes: int | None = None
    params: int | None = None
    started_at: str | None = None
    #: Which rule ended the measured phase, e.g. ``fixed: 20 steps``.
    stopped_by: str | None = None
    step_time_ms: Stats | None = None
    throughput_sps: float | None = None
    cpu_util_pct: CpuUtil | None = None
    idle_ratio: list[float | None] | None = None
    process_cpu_pct: float | None = None
    peak_memory_bytes: int | None = None
    peak_memory_source: str | None = None
    infer_time_ms: Stats | None = None
    infer_peak_memory_bytes: int | None = None
    #: Peak memory torch's CUDA allocator held during training (None on the CPU).
    gpu_peak_memory_bytes: int | None = None
    #: Energy of the training window above the idle baseline (E_window - P_idle * T), from ``energy_source``;
    #: without an idle baseline, E_window itself.  Measured only: an estimate never lands here.
    energy_j: float | None = None
    energy_per_step_j: float | None = None
    energy_per_sample_j: float | None = None
    #: E_window before idle subtraction, and the window's length
    energy_gross_j: float | None = None
    energy_window_s: float | None = None
    idle_power_w: float | None = None
    idle_window_s: float | None = None
    avg_power_w: float | None = None
    #: which sensor and channels measured it, e.g. ``jetson_power: VDD_IN (power samples)``; ``estimated: <model>``
    #: when only an estimate exists
    energy_source: str | None = None
    energy_by_rail: dict[str, RailEnergy] | None = None
    energy_notes: list[str] | None = None
    #: What distorts this measurement, each with its number (threads beyond the cores, a sampler taking much of a
    #: core); null when nothing did.
    measurement_notes: list[str] | None = None
    #: Asked for with ``--estimate-energy``: the same quantities from a utilization power model, labelled with it.
    estimated_energy_j: float | None = None
    estimated_energy_per_step_j: float | None = None
    estimated_energy_per_sample_j: float | None = None
    estimated_avg_power_w: float | None = None
    estimated_idle_power_w: float | None = None
    estimated_energy_source: str | None = None
    gpu_util_pct: GpuUtil | None = None
    cpu_freq_khz: list[float | None] | None = None
    temperature_c: dict[str, Range] | None = None
    loss: LossSummary | None = None
    sampler: SamplerSummary | None = None
    env: dict[str, Any] = {}
    backend: str = "torch"
    precision: str = "fp32"
    #: ``train``: the measured steps are training steps; ``infer``: forward passes only (``--mode infer``).
    mode: Literal["train", "infer"] = "train"
    #: Where the trial ran, as the user named it: ``local``, ``ssh://host``, ``adb://SERIAL`` or a configured name.
    target: str = "local"
    #: The host that ran it: this machine's hostname on the local executor, the fleet host's name on Ray
    #: (``edgebench fleet join --name``); None for a trial run outside a sweep.
    host: str | None = None
    #: The CPU frequency the trial asked for (kHz); ``sweep.freq_set_khz`` says what each policy got.
    freq_khz: int | None = None
    #: The core mask as the user typed it (``0f``, ``0x3``, ``f0``), where ``cores`` was given as a hex mask: the
    #: MNN-based suite names its result folders ``<Device>_Core_<mask as typed>``.
    cores_mask: str | None = None
    #: Where an imported trial came from (``mnn-suite:MEIZU_Freq_1708800``); None for a trial edgebench ran.  An
    #: imported trial holds what that tool measured and nothing else.
    imported_from: str | None = None
    #: The 95% CI target of an adaptive trial, in percent of the mean step time (``stopped_by`` says if met).
    target_ci_pct: float | None = None
    #: The worker's CPU time over the inference window (100 = one core), as ``process_cpu_pct`` for training.
    infer_process_cpu_pct: float | None = None
    #: Peak virtual size of the worker over its life (``VmPeak``), the MNN suite's ``VIRT``.
    virtual_memory_peak_bytes: int | None = None
    sweep: SweepInfo | None = None
    #: The input preset the trial ran at, the real dataset it trained on (None: synthetic batches).
    preset: str | None = None
    data: str | None = None
    #: The memory the worker was allowed (None: no budget); over it the status is ``infeasible``.
    memory_budget_bytes: int | None = None
    #: Time to accuracy (``--until-accuracy``): the target, whether it was reached, and at what cost.  Time runs
    #: from the first training step (warm-up included) to the end of the evaluation that reached the target,
    #: evaluations included (as MLPerf Training times it); steps and samples count warm-up steps too.
    target_accuracy: float | None = None
    reached_accuracy: bool | None = None
    final_accuracy: float | None = None
    time_to_accuracy_s: float | None = None
    steps_to_accuracy: int | None = None
    samples_to_accuracy: int | None = None
    #: Energy over the same span; None until the device has a power sensor (never estimated here).
    energy_to_accuracy_j: float | None = None
    eval_time_s: float | None = None
    accuracy_curve: list[AccuracyPoint] | None = None
    predictability: Predictability | None = None
    trace: TraceSummary | None = None
    #: None where the device exposes no CPU frequency or temperature (nothing to tell throttling by).
    throttling: Throttling | None = None
    #: ``int8`` trials: how the model was quantized and its accuracy change against fp32 (None otherwise).
    quantization: Quantization | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored record of any earlier schema version to :data:`SCHEMA_VERSION`.

    Version 2 added the energy, idle-power, estimated-energy and GPU-utilization fields, and the sweep, precision,
    target-CI, inference-CPU and VmPeak fields, all optional: a version 1 record reads as one with none measured.
    Version 3 added ``predictability``, ``trace`` and ``throttling``, optional too: in an older record they are
    null because that version did not measure them, not because the device could not.  ``quantization`` (int8
    trials) and ``mode`` came later within version 3, optional with defaults.
    """
    version = record.get("schema_version", 1)
    if version > SCHEMA_VERSION:
        raise ValueError(f"result schema {version} is newer than this edgebench ({SCHEMA_VERSION}); upgrade it")
    return {**record, "schema_version": SCHEMA_VERSION}
