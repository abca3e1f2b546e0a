"""The terminal summary of one trial (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from edgebench.host.cpuset import format_cpu_list, format_mask
from edgebench.result import Stats, TrialResult


def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _stats(s: Stats | None) -> str:
    if s is None:
        return "-"
    return f"{s.mean:.2f} ± {s.ci95:.2f} (median {s.median:.2f}, p5 {s.p5:.2f}, p95 {s.p95:.2f}, cv {s.cv:.1%})"


def _pcts(values: list[float]) -> str:
    return "  ".join(f"{v:.0f}" if v == v else "-" for v in values)


def summary_table(r: TrialResult) -> Table:
    where = f"cpu {format_cpu_list(r.cores)} (mask {format_mask(r.cores)})" if r.cores else "-"
    title = f"{r.model}  batch {r.batch_size}  {r.threads} threads  {where}  [{r.trial_id}]"
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    table.add_row("status", r.status if r.ok else f"[red]{r.status}[/red]: {r.reason}")
    table.add_row("train step (ms)", _stats(r.step_time_ms) + f"  over {r.steps} steps after {r.warmup} warm-up")
    if r.throughput_sps is not None:
        table.add_row("throughput", f"{r.throughput_sps:.1f} samples/s")
    table.add_row("inference (ms)", _stats(r.infer_time_ms))
    if r.cpu_util_pct:
        table.add_row("cpu util % (per core)", f"mean {r.cpu_util_pct.mean:.1f}   [{_pcts(r.cpu_util_pct.per_core)}]")
    if r.idle_ratio:
        table.add_row("idle ratio % (per core)", _pcts([100 * v for v in r.idle_ratio]))
    if r.process_cpu_pct is not None:
        table.add_row("worker cpu %", f"{r.process_cpu_pct:.0f} (100 = one core)")
    source = f" ({r.peak_memory_source})" if r.peak_memory_source else ""
    table.add_row("peak memory (train)", _bytes(r.peak_memory_bytes) + source)
    if r.cpu_freq_khz:
        table.add_row("cpu freq MHz (per core)", "  ".join(f"{f / 1e3:.0f}" if f else "-" for f in r.cpu_freq_khz))
    if r.temperature_c:
        table.add_row("temperature °C (max)", "  ".join(f"{k} {v.max:.1f}" for k, v in r.temperature_c.items()))
    table.add_row("energy", f"{r.energy_j:.3f} J" if r.energy_j is not None else "- (no power sensor)")
    if r.loss:
        flag = "" if r.loss.finite else "  [red]non-finite loss[/red]"
        table.add_row("loss", f"{r.loss.first:.4f} -> {r.loss.last:.4f}{flag}")
    if r.predictability:
        table.add_row("predictability", _predictability(r))
    if r.trace:
        what = "modules" if r.trace.granularity == "layers" else "op names"
        table.add_row(
            "trace",
            f"{r.trace.granularity}: {r.trace.spans} spans of {r.trace.labels} {what}, "
            f"{r.trace.covered_pct:.0f}% of the step; see `edgebench layers {r.trial_id}`, "
            f"`edgebench trace {r.trial_id} -o trace.json`",
        )
    if r.sampler:
        missing = ", ".join(r.sampler.unavailable) or "none"
        table.add_row(
            "sampler",
            f"{r.sampler.samples} samples every {r.sampler.interval_ms:g} ms, "
            f"{r.sampler.cpu_pct_of_core:.2f}% of a core; not on this device: {missing}",
        )
    env = r.env
    table.add_row("environment", f"{env.get('cpu_model')} | torch {env.get('torch')} | {env.get('kernel')}")
    return table


def _predictability(r: TrialResult) -> str:
    p = r.predictability
    assert p is not None
    text = f"step cv {p.step_time_cv:.1%}: ±5% needs {p.steps_for_ci_5pct} steps, ±1% {p.steps_for_ci_1pct} (95% CI)"
    if p.utilization_periodicity_mean is not None:
        text += f"; utilization periodicity at the step period {p.utilization_periodicity_mean:.2f}"
    elif p.periodicity_note:
        text += f"; periodicity: {p.periodicity_note}"
    return text


def print_summary(result: TrialResult, console: Console | None = None) -> None:
    (console or Console()).print(summary_table(result))
