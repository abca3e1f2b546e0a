"""The fields users compare across trials, declared once: the report's summary table and ``edgebench trials``.

Every setting a sweep varies is one of them (the core set and the applied frequency included), so two trials that
differ only there are never two identical rows."""

from __future__ import annotations

from dataclasses import dataclass

from edgebench.host.cpuset import format_mask
from edgebench.measure.repeats import repeat_label
from edgebench.records.result import TrialResult
from edgebench.report.sweep_summary import _energy_per_sample_j
from edgebench.units import MIB


@dataclass(frozen=True)
class Column:
    field: str
    title: str
    digits: int | None  # None: text


#: The summary table: the fields users compare (declared once; the HTML and its test read these names).
SUMMARY_COLUMNS = (
    Column("trial_id", "trial", None),
    Column("model", "model", None),
    Column("backend", "backend", None),
    Column("mode", "mode", None),
    Column("precision", "precision", None),
    Column("target", "target", None),
    Column("batch_size", "batch", 0),
    Column("threads", "threads", 0),
    Column("cores", "cores (mask)", None),
    Column("freq_mhz", "CPU MHz (applied)", 1),
    Column("repeat", "repeat", None),
    Column("step_ms", "step ms", 3),
    Column("step_ci95_ms", "± 95% CI ms", 3),
    Column("throughput_sps", "samples/s", 2),
    Column("model_load_ms", "cold: load ms", 1),
    Column("first_step_ms", "cold: first step ms", 3),
    Column("cpu_util_pct", "CPU %", 1),
    Column("peak_memory_mib", "peak MiB", 1),
    Column("energy_per_sample_j", "J/sample", 5),
    Column("status", "status", None),
)


def summary_values(r: TrialResult) -> dict[str, str | float | int | None]:
    """The summary table's cells of one trial, as numbers (the HTML formats them and keeps the raw value)."""
    s, c = r.latency.step_ms, r.cold_start
    return {
        "trial_id": r.trial_id,
        "model": r.trial.model,
        "backend": r.trial.backend,
        "mode": r.trial.mode,
        "precision": r.trial.precision,
        "target": r.target,
        "batch_size": r.trial.batch_size,
        "threads": r.trial.threads,
        "cores": (r.trial.cores_mask or format_mask(r.trial.cores)) if r.trial.cores else None,
        "freq_mhz": r.applied_freq_khz / 1e3 if r.applied_freq_khz else None,
        "repeat": repeat_label(r),
        "step_ms": s.mean if s else None,
        "step_ci95_ms": s.ci95 if s else None,
        "throughput_sps": r.latency.throughput_sps,
        "model_load_ms": c.model_load_s * 1e3 if c and c.model_load_s is not None else None,
        "first_step_ms": c.first_step_ms if c else None,
        "cpu_util_pct": r.cpu.util_pct.mean if r.cpu.util_pct else None,
        "peak_memory_mib": r.memory.peak_bytes / MIB if r.memory.peak_bytes is not None else None,
        "energy_per_sample_j": _energy_per_sample_j(r),
        "status": r.status,
    }
