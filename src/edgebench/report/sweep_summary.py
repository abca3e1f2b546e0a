"""The table printed after a sweep: one row per trial, and the best configuration per model for the objective."""

from __future__ import annotations

from rich import box
from rich.table import Table

from edgebench.host.cpuset import format_mask
from edgebench.records.result import TrialResult
from edgebench.report.fit import keep_whole
from edgebench.units import MIB


def _energy_per_sample_j(r: TrialResult) -> float | None:
    """Energy per training sample as the power-sensor code reports it; ``None`` where the device has no sensor."""
    value = r.energy.per_sample_j
    if value is None and r.energy.energy_j is not None and r.latency.step_ms is not None:
        value = r.energy.energy_j / (r.latency.step_ms.n * r.trial.batch_size)
    return value


def sweep_table(results: list[TrialResult], title: str) -> Table:
    """One row per trial, readable at 80 columns: no vertical rules, and a column no trial has a value for (no
    pinned frequency, no power sensor) is left out rather than squeezing the others.  What is run (model, backend,
    mode) is a column only where trials differ in it: a value every trial shares is said once, in the title
    (``every trial mobilenet_v2 mnn infer``), the defaults (torch, training) not at all.  The status comes before
    the figures, so that a table too wide for its terminal loses a figure, not the status."""
    rows = [_row(r) for r in results]
    keep, shared = [], []
    for i, name in enumerate(_COLUMNS):
        values = {row[i] for row in rows}
        if name in _TITLE_WHEN_SHARED and len(values) <= 1:
            shared += sorted(values - {_TITLE_WHEN_SHARED[name]})
        elif name in _ALWAYS or values - {"-"}:
            keep.append(i)
    title = f"{title}: every trial {' '.join(shared)}" if shared else title
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for i in keep:
        name = _COLUMNS[i]
        table.add_column(name, justify="left" if name in ("model", "backend", "mode", "prec", "status") else "right")
    for row in rows:
        table.add_row(*(row[i] for i in keep))
    return keep_whole(table)


_COLUMNS = ("model", "backend", "mode", "bs", "thr", "mask", "MHz", "prec", "seq", "lora r", "status", "step ms",
            "±ci95", "samples/s", "tokens/s", "MiB", "J/sample")  # fmt: skip
#: Columns shown even when empty: they say what every row is.
_ALWAYS = ("bs", "thr", "mask", "prec", "status", "step ms")
#: Columns shown only where trials differ in them; a shared value goes in the title unless it is this default.
_TITLE_WHEN_SHARED = {"model": None, "backend": "torch", "mode": "train"}


def _row(r: TrialResult) -> list[str]:
    s = r.latency.step_ms
    energy = _energy_per_sample_j(r)
    lm = r.language_model
    return [
        r.trial.model,
        r.trial.backend,
        r.trial.mode,
        str(r.trial.batch_size),
        str(r.trial.threads or "-"),
        format_mask(r.trial.cores) if r.trial.cores else "-",
        f"{r.trial.freq_khz / 1e3:g}" if r.trial.freq_khz else "-",
        r.trial.precision,
        str(r.workload.input_shape[0]) if lm is not None and r.workload.input_shape else "-",
        str(lm.setup.lora_rank) if lm is not None and lm.setup.lora_rank else "-",
        r.status if r.ok else f"[red]{r.status}[/red]",
        f"{s.mean:.2f}" if s else "-",
        f"{s.ci95:.2f}" if s and s.ci95 is not None else "-",
        f"{r.latency.throughput_sps:.1f}" if r.latency.throughput_sps is not None else "-",
        f"{lm.tokens_per_s:.0f}" if lm is not None and lm.tokens_per_s is not None else "-",
        f"{r.memory.peak_bytes / MIB:.0f}" if r.memory.peak_bytes else "-",
        f"{energy:.4g}" if energy is not None else "-",
    ]


def best_per_model(results: list[TrialResult], objective: str) -> dict[str, TrialResult]:
    """Per model, the ok trial with the lowest time per sample (latency-first) or energy per sample (energy-first).

    Per sample, not per step, so that batch sizes compare fairly; a language model's per token, so that sequence
    lengths do too.  Energy-first needs energy: without a power sensor no trial qualifies and the result is empty.
    """
    best: dict[str, tuple[float, TrialResult]] = {}
    for r in results:
        if not r.ok or r.latency.step_ms is None:
            continue
        score = _energy_per_sample_j(r) if objective == "energy-first" else r.latency.step_ms.mean / r.trial.batch_size
        lm = r.language_model
        if lm is not None and lm.tokens_per_s:
            score = lm.energy_per_token_j if objective == "energy-first" else 1.0 / lm.tokens_per_s
        if score is None:
            continue
        if r.trial.model not in best or score < best[r.trial.model][0]:
            best[r.trial.model] = (score, r)
    return {model: r for model, (_, r) in best.items()}
