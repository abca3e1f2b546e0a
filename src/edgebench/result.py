"""The record of one trial: what ``--json`` prints and what the store keeps.

The field names are a contract: later versions add fields, never rename them.  ``schema_version`` rises when the
shape changes and :func:`upgrade` brings older records forward.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1

Status = Literal["ok", "crashed", "oom", "timeout", "infeasible", "error"]


class Stats(BaseModel):
    """Distribution of per-step times in ms; ``ci95`` is the half-width of the 95% t-interval of the mean."""

    mean: float
    median: float
    p5: float
    p95: float
    std: float
    ci95: float
    n: int
    cv: float


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


class TrialResult(BaseModel):
    model_config = ConfigDict(extra="allow")

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
    energy_j: float | None = None
    cpu_freq_khz: list[float | None] | None = None
    temperature_c: dict[str, Range] | None = None
    loss: LossSummary | None = None
    sampler: SamplerSummary | None = None
    env: dict[str, Any] = {}
    predictability: Predictability | None = None
    trace: TraceSummary | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored record of any earlier schema version to :data:`SCHEMA_VERSION` (none exist yet)."""
    version = record.get("schema_version", 1)
    if version > SCHEMA_VERSION:
        raise ValueError(f"result schema {version} is newer than this edgebench ({SCHEMA_VERSION}); upgrade it")
    return record
