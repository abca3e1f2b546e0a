"""What the studies read from stored trials: the figures a check takes, and the groupings it takes them in.

Only measured figures are read here.  Energy is read only where a power sensor measured it (``energy.source``);
a trial's ``estimated_energy`` is never read, so no verdict can rest on the utilization model.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from edgebench.measure.repeats import by_configuration
from edgebench.records.result import TrialResult


def cpu_util(r: TrialResult) -> float | None:
    """The cores' mean utilization from ``/proc/stat`` (the paper's, every process's), or where the counters did not
    advance (a copied tree) the training worker's own CPU time as a share of its cores (its rusage): measured
    either way, and named by :func:`cpu_util_source`."""
    if r.cpu.util_pct is not None and r.cpu.util_pct.mean is not None:
        return r.cpu.util_pct.mean
    cores = len(r.trial.cores or r.device.affinity or ()) or r.device.cpu_count
    if r.cpu.process_pct is None or not cores:
        return None
    return r.cpu.process_pct / cores  # process_pct is in percent of one core


def cpu_util_source(results: Sequence[TrialResult]) -> str:
    per_core = sum(1 for r in results if r.cpu.util_pct is not None and r.cpu.util_pct.mean is not None)
    if per_core == len(results):
        return "cores' mean utilization, /proc/stat"
    if not per_core:
        return "the worker's CPU time over its cores, rusage: /proc/stat did not advance"
    return f"cores' mean utilization for {per_core} trials, the worker's CPU share for {len(results) - per_core}"


def gpu_util(r: TrialResult) -> float | None:
    return r.gpu_util_pct.mean if r.gpu_util_pct is not None else None


def measured_energy(r: TrialResult) -> bool:
    """A power sensor measured this trial's energy (never true for an estimate)."""
    return r.energy.source is not None and r.energy.gross_j is not None


def gross_energy_per_step_j(r: TrialResult) -> float | None:
    """Whole-system energy of one measured step, as the paper's E (power samples times their interval, idle not
    subtracted: its Figure 6 is the system's energy)."""
    steps = r.latency.measured_steps
    if not measured_energy(r) or not steps:
        return None
    return (r.energy.gross_j or 0.0) / steps


def throughput(r: TrialResult) -> float | None:
    return r.latency.throughput_sps


def activations_bytes(r: TrialResult) -> int | None:
    m = r.memory.by_category
    return m.activations_bytes if m is not None else None


def by_model(results: Sequence[TrialResult]) -> dict[str, list[TrialResult]]:
    out: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        out[r.trial.model].append(r)
    return dict(out)


def having(results: Sequence[TrialResult], value: Callable[[TrialResult], float | int | None]) -> list[TrialResult]:
    return [r for r in results if value(r) is not None]


def batch_sizes(results: Sequence[TrialResult]) -> set[int]:
    return {r.trial.batch_size for r in results}


def is_lstm(model: str) -> bool:
    """A recurrent model, by its zoo entry's description (char_cnn, rnn_ptb_small, deepspeech, seq2seq)."""
    from edgebench.workloads import get_workload

    try:
        return "LSTM" in get_workload(model).description
    except Exception:
        return False


def most_common(notes: Sequence[str | None]) -> str | None:
    found = [n for n in notes if n]
    return max(set(found), key=found.count) if found else None


def median_step_ms(r: TrialResult) -> float | None:
    """A repeat's step time: the median of its measured steps (training steps, or an inference trial's passes; the
    mean where only the mean was kept)."""
    s = r.latency.step_ms or r.latency.infer_ms
    if s is None:
        return None
    return s.median if s.median is not None else s.mean


def values(
    results: Sequence[TrialResult], value: Callable[[TrialResult], float | None] = median_step_ms
) -> list[float]:
    """One value per repeat (per trial: each a fresh worker process), where it has one."""
    return [v for r in results if (v := value(r)) is not None]


def configurations(results: Sequence[TrialResult]) -> list[list[TrialResult]]:
    """The results by configuration: each list the repeats of one configuration."""
    return list(by_configuration(results).values())
