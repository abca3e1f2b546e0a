"""The terminal summary of one trial (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from edgebench.host.cpuset import format_cpu_list, format_mask
from edgebench.records.result import Stats, Throttling, TrialResult
from edgebench.units import format_size


def _bytes(n: int | None) -> str:
    return "-" if n is None else format_size(n)


def _stats(s: Stats | None) -> str:
    if s is None:
        return "-"
    if s.ci95 is None or s.median is None or s.p5 is None or s.p95 is None or s.cv is None:
        return f"{s.mean:.2f} (mean of {s.n} steps; nothing else was kept)"
    return f"{s.mean:.2f} ± {s.ci95:.2f} (median {s.median:.2f}, p5 {s.p5:.2f}, p95 {s.p95:.2f}, cv {s.cv:.1%})"


def _pcts(values: list[float] | list[float | None]) -> str:
    return "  ".join(f"{v:.0f}" if v is not None and v == v else "-" for v in values)


def energy_text(r: TrialResult) -> str:
    """Measured energy with its source, or why there is none."""
    if r.energy_j is None:
        return "- (no power sensor; --estimate-energy gives a labelled estimate)"
    idle = f", idle {r.idle_power_w:.2f} W subtracted" if r.idle_power_w is not None else ", no idle baseline"
    return (
        f"{r.energy_j:.3f} J ({r.energy_per_step_j:.4f} J/step, {r.energy_per_sample_j * 1e3:.2f} mJ/sample), "
        f"mean {r.avg_power_w:.2f} W{idle}  " + escape(f"[{r.energy_source}]")
    )


def _accuracy(r: TrialResult) -> str:
    final = "-" if r.final_accuracy is None else f"{r.final_accuracy:.4f}"
    if not r.reached_accuracy:
        return f"[red]target {r.target_accuracy:g} not reached[/red] (last held-out accuracy {final})"
    energy = f", {r.energy_to_accuracy_j:.1f} J" if r.energy_to_accuracy_j is not None else ""
    return (
        f"{r.target_accuracy:g} on held-out {r.data} in {r.time_to_accuracy_s:.2f} s, {r.steps_to_accuracy} steps, "
        f"{r.samples_to_accuracy} samples{energy} (evaluations {r.eval_time_s:.2f} s of it; final {final})"
    )


def summary_table(r: TrialResult) -> Table:
    where = f"cpu {format_cpu_list(r.cores)} (mask {format_mask(r.cores)})" if r.cores else "-"
    title = f"{r.model}  batch {r.batch_size}  {r.threads} threads  {where}  [{r.trial_id}]"
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    table.add_row("status", r.status if r.ok else f"[red]{r.status}[/red]: {r.reason}")
    stopped = f"; {r.stopped_by}" if r.stopped_by and not r.stopped_by.startswith("fixed") else ""
    if r.step_time_ms is None and r.stopped_by and not r.ok:  # say what was measured, not what was asked for
        steps = f"none kept ({r.stopped_by}; {r.steps} planned after {r.warmup} warm-up)"
        if r.stopped_by.endswith(" 0 measured steps"):
            steps = f"none measured ({r.steps} planned after {r.warmup} warm-up)"
    elif r.step_time_ms is None:  # stored before failed trials said how far they got: rendered as it was then
        steps = f"-  over {r.steps} steps after {r.warmup} warm-up"
    else:
        steps = _stats(r.step_time_ms) + f"  over {r.step_time_ms.n} steps after {r.warmup} warm-up{stopped}"
    table.add_row("train step (ms)", steps)
    for note in r.measurement_notes or ():
        table.add_row("[yellow]distorted by[/yellow]", note)
    if r.throughput_sps is not None:
        table.add_row("throughput", f"{r.throughput_sps:.1f} samples/s")
    table.add_row("inference (ms)", _stats(r.infer_time_ms))
    if r.cpu_util_pct:
        mean = "-" if r.cpu_util_pct.mean is None else f"{r.cpu_util_pct.mean:.1f}"
        table.add_row("cpu util % (per core)", f"mean {mean}   [{_pcts(r.cpu_util_pct.per_core)}]")
    if r.idle_ratio:
        table.add_row("idle ratio % (per core)", _pcts([None if v is None else 100 * v for v in r.idle_ratio]))
    if r.process_cpu_pct is not None:
        table.add_row("worker cpu %", f"{r.process_cpu_pct:.0f} (100 = one core)")
    source = f" ({r.peak_memory_source})" if r.peak_memory_source else ""
    budget = f"  of a {_bytes(r.memory_budget_bytes)} budget" if r.memory_budget_bytes else ""
    table.add_row("peak memory (train)", _bytes(r.peak_memory_bytes) + source + budget)
    if r.cpu_freq_khz:
        table.add_row("cpu freq MHz (per core)", "  ".join(f"{f / 1e3:.0f}" if f else "-" for f in r.cpu_freq_khz))
    if r.temperature_c:
        table.add_row("temperature °C (max)", "  ".join(f"{k} {v.max:.1f}" for k, v in r.temperature_c.items()))
    if r.throttling:
        table.add_row("thermal throttling", throttling_text(r.throttling))
    table.add_row("energy", energy_text(r))
    if r.energy_by_rail and len(r.energy_by_rail) > 1:
        rails = "  ".join(f"{k} {v.avg_power_w:.2f} W" for k, v in r.energy_by_rail.items())
        table.add_row("power by rail (mean)", rails)
    if r.estimated_energy_j is not None:
        table.add_row(
            "energy (estimated)",
            f"{r.estimated_energy_j:.3f} J, {r.estimated_energy_per_step_j:.4f} J/step, mean "
            f"{r.estimated_avg_power_w:.2f} W  " + escape(f"[{r.estimated_energy_source}]"),
        )
    if r.gpu_util_pct:
        table.add_row(
            "gpu util % (per gpu)", f"mean {r.gpu_util_pct.mean or 0:.1f}   [{_pcts(r.gpu_util_pct.per_gpu)}]"
        )
    for note in r.energy_notes or []:
        table.add_row("[yellow]energy note[/yellow]", escape(note))
    if r.target_accuracy is not None:
        table.add_row("time to accuracy", _accuracy(r))
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


def throttling_text(t: Throttling) -> str:
    """``none`` or, per episode, the policy, when and for how long, and how far its clock fell."""
    if not t.episodes:
        return f"none: no clock held below 95% of its reference under load at >= {t.hot_c:g} °C"
    episodes = [
        f"{e.policy} from {e.start_s:.1f} s for {e.duration_s:.1f} s, down to {e.min_freq_khz / 1e3:.0f} of"
        f" {e.reference_khz / 1e3:.0f} MHz at {e.max_temp_c:.1f} °C"
        for e in t.episodes
    ]
    return f"{t.throttled_s:.1f} s: " + "; ".join(episodes)
