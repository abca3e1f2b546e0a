"""The terminal summary of one trial (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from edgebench.host.cpuset import format_cpu_list, format_mask
from edgebench.host.perf_events import NANOSECOND_EVENTS
from edgebench.markup import rich_text
from edgebench.measure.utilization import INFER_CPU, TRAIN_CPU, withheld
from edgebench.records.result import Stats, Throttling, TrialResult
from edgebench.report.warnings import warning_text
from edgebench.units import format_size


def _bytes(n: int | None) -> str:
    return "-" if n is None else format_size(n)


def _stats(s: Stats | None) -> str:
    if s is None:
        return "-"
    if s.ci95 is None or s.median is None or s.p5 is None or s.p95 is None or s.cv is None:
        counted = f"mean of {s.n} steps" if s.n > 1 else "one mean"
        return f"{s.mean:.2f} ({counted}; nothing else was kept)"
    return f"{s.mean:.2f} ± {s.ci95:.2f} (median {s.median:.2f}, p5 {s.p5:.2f}, p95 {s.p95:.2f}, cv {s.cv:.1%})"


def _pcts(values: list[float] | list[float | None]) -> str:
    return "  ".join(f"{v:.0f}" if v is not None and v == v else "-" for v in values)


def counters_text(per_step: dict[str, float]) -> str:
    """``task-clock 12.3 ms  page-faults 4  ...``; the cache miss ratio where both cache events were counted."""
    parts = [f"{n} {v / 1e6:.2f} ms" if n in NANOSECOND_EVENTS else f"{n} {v:,.0f}" for n, v in per_step.items()]
    refs, misses = per_step.get("cache-references"), per_step.get("cache-misses")
    if refs and misses is not None:
        parts.append(f"miss ratio {100 * misses / refs:.1f}%")
    return "  ".join(parts)


def energy_text(r: TrialResult) -> str:
    """Measured energy with its source, or why there is none (plain text)."""
    if r.energy.energy_j is None and r.energy.gross_j is not None:
        return "- (measured, but the window cannot resolve it: see the energy note)"
    if r.energy.energy_j is None:
        return "- (no power sensor; --estimate-energy gives a labelled estimate)"
    ci = f" ± {r.energy.energy_ci95_j:.3f} J (95%)" if r.energy.energy_ci95_j is not None else " J"
    idle = (
        f", idle {r.energy.idle_power_w:.2f} W subtracted"
        if r.energy.idle_power_w is not None
        else ", no idle baseline"
    )
    return (
        f"{r.energy.energy_j:.3f}{ci} ({r.energy.per_step_j:.4f} J/step, "
        f"{r.energy.per_sample_j * 1e3:.2f} mJ/sample), "
        f"mean {r.energy.avg_power_w:.2f} W{idle}  [{r.energy.source}]"
    )


#: Where the first step sat, in words (any other value: it was the first measured step).
_FIRST_STEP_WHERE = {
    "warmup": "warm-up step 0",
    "infer_warmup": "warm-up step 0",
    "extra": "an extra step before the measured ones",
    "command": "from the command's start",
}


def cold_start_texts(r: TrialResult) -> tuple[str | None, str | None]:
    """The model's load (time, peak memory, what was timed) and the first step after it, against the measured
    steps' median (both of the same mode: a training trial's first training step, an inference trial's first
    inference); None for a part not recorded."""
    c = r.cold_start
    if c is None:
        return None, None
    load = None
    if c.model_load_s is not None:
        added = c.model_load_added_memory_bytes
        rise = f", +{format_size(added)} over it" if added else ""
        peak = _bytes(c.model_load_peak_memory_bytes)
        load = f"{c.model_load_s * 1e3:.1f} ms, peak {peak}{rise}  [{c.model_load_what}]"
    first = None
    if c.first_step_ms is not None:
        kind = "inference" if c.first_step_mode == "infer" else "training step"
        where = _FIRST_STEP_WHERE.get(c.first_step_counted_as or "", "measured step 0")
        first = f"{c.first_step_ms:.2f} ms, the first {kind} ({where})"
        median = r.latency.step_ms.median if r.latency.step_ms is not None else None
        if median and c.first_step_mode == r.trial.mode:
            first += f"; {c.first_step_ms / median:.1f}x the measured median {median:.2f} ms"
    return load, first


def mode_name(r: TrialResult) -> str:
    return "inference" if r.trial.mode == "infer" else "training"


def framework_text(r: TrialResult) -> str:
    """The framework that ran the trial and its version (``onnxruntime 1.18.0``), not torch's for every backend."""
    backend = r.trial.backend
    version = {"torch": r.device.torch, "mnn": r.device.mnn, "onnxruntime": r.device.onnxruntime,
               "litert": r.device.litert}.get(backend)  # fmt: skip
    if backend.startswith("executorch"):  # executorch, executorch-portable
        version = r.device.executorch
    if backend == "command":
        return f"command: {r.trial.command}"
    return f"{backend} {version or '(version not recorded)'}"


def freq_set_text(r: TrialResult) -> str:
    """The frequency applied per policy, beside what was asked (a policy offers only some frequencies)."""
    assert r.trial.freq_khz is not None
    asked = f"asked {r.trial.freq_khz / 1e3:g} MHz"
    if not r.cpu.freq_applied_khz:
        return f"{asked}; applied: not recorded"
    applied = ", ".join(f"{p} {k / 1e3:g} MHz" for p, k in r.cpu.freq_applied_khz.items())
    return f"applied {applied} ({asked})"


def _accuracy(r: TrialResult) -> str:
    """Rich markup: the time to accuracy, in red where the target was not reached."""
    assert r.accuracy is not None
    final = "-" if r.accuracy.final is None else f"{r.accuracy.final:.4f}"
    if not r.accuracy.reached:
        return f"[red]target {r.trial.until_accuracy:g} not reached[/red] (last held-out accuracy {final})"  # markup
    a = r.accuracy
    energy = f", {a.energy_j:.1f} J" if a.energy_j is not None else ""
    return (
        f"{r.trial.until_accuracy:g} on held-out {rich_text(r.trial.data)} in {a.time_s:.2f} s, {a.steps} steps, "
        f"{a.samples} samples{energy} (evaluations {a.eval_time_s:.2f} s of it; final {final})"
    )


def summary_table(r: TrialResult) -> Table:
    where = f"cpu {format_cpu_list(r.trial.cores)} (mask {format_mask(r.trial.cores)})" if r.trial.cores else "-"
    title = (
        f"{r.trial.model}  {r.trial.backend} {r.trial.precision} {mode_name(r)}  batch {r.trial.batch_size}  "
        f"{r.trial.threads} threads  {where}  [{r.trial_id}]"
    )
    table = Table(title=rich_text(title), show_header=False, title_justify="left")

    def add(label: str, text: str) -> None:
        """A row whose text is data (names, reasons, a command line, a device's words): shown as it is."""
        table.add_row(label, rich_text(text))

    table.add_column(style="bold")
    table.add_column()
    table.add_row("status", r.status if r.ok else f"[red]{rich_text(r.status)}[/red]: {rich_text(r.reason)}")
    stopped = f"; {r.stopped_by}" if r.stopped_by and not r.stopped_by.startswith("fixed") else ""
    if r.latency.step_ms is None and r.stopped_by and not r.ok:  # say what was measured, not what was asked for
        steps = f"none kept ({r.stopped_by}; {r.trial.steps} planned after {r.trial.warmup} warm-up)"
        if r.stopped_by.endswith(" 0 measured steps"):
            steps = f"none measured ({r.trial.steps} planned after {r.trial.warmup} warm-up)"
    elif r.latency.step_ms is None:  # stored before failed trials said how far they got: rendered as it was then
        steps = f"-  over {r.trial.steps} steps after {r.trial.warmup} warm-up"
    elif r.latency.measured_steps is None and r.trial.command is not None:  # a tool's mean, its count unprinted
        steps = _stats(r.latency.step_ms) + "  over steps the tool did not count"
    else:
        steps = (
            _stats(r.latency.step_ms) + f"  over {r.latency.step_ms.n} steps after {r.trial.warmup} warm-up{stopped}"
        )
    infer_trial = r.trial.mode == "infer"
    add("inference step (ms)" if infer_trial else "train step (ms)", steps)
    if (warned := warning_text(r)) is not None:
        table.add_row("[yellow]warning[/yellow]", rich_text(warned))
    for note in r.measurement_notes or ():  # a figure left out is not a distortion: say which it is
        label = "withheld" if withheld([note], TRAIN_CPU) or withheld([note], INFER_CPU) else "distorted by"
        table.add_row(f"[yellow]{label}[/yellow]", rich_text(note))
    if r.latency.throughput_sps is not None:
        add("throughput", f"{r.latency.throughput_sps:.1f} samples/s")
    if not infer_trial:  # an inference trial's passes are its steps, shown above
        add("inference (ms)", _stats(r.latency.infer_ms))
    if r.cold_start is not None:
        load, first = cold_start_texts(r)
        if load:
            add("cold start: model load", load)
        if first:
            add("cold start: first step", first)
        for note in r.cold_start.notes or ():
            table.add_row("[yellow]cold start note[/yellow]", rich_text(note))
    if r.cpu.util_pct:
        mean = "-" if r.cpu.util_pct.mean is None else f"{r.cpu.util_pct.mean:.1f}"
        add("cpu util % (per core)", f"mean {mean}   [{_pcts(r.cpu.util_pct.per_core)}]")
    if r.cpu.idle_ratio:
        add("idle ratio % (per core)", _pcts([None if v is None else 100 * v for v in r.cpu.idle_ratio]))
    if r.cpu.process_pct is not None:
        add("worker cpu %", f"{r.cpu.process_pct:.0f} (100 = one core)")
    elif withheld(r.measurement_notes, TRAIN_CPU):  # withheld, not absent: the row says so, not disappearing
        add("worker cpu %", "- (withheld; the note above says why)")
    source = f" ({r.memory.peak_source})" if r.memory.peak_source else ""
    budget = f"  of a {_bytes(r.trial.memory_budget_bytes)} budget" if r.trial.memory_budget_bytes else ""
    add(f"peak memory ({'infer' if infer_trial else 'train'})", _bytes(r.memory.peak_bytes) + source + budget)
    if r.trial.freq_khz is not None:
        add("cpu freq set", freq_set_text(r))
    if r.memory.by_category is not None:
        from edgebench.report.memory import category_text

        add(f"memory by category ({r.memory.by_category.mode})", category_text(r.memory.by_category))
    if r.language_model is not None:
        from edgebench.report.lm import lm_rows

        for label, text in lm_rows(r):
            add(label, text)
    if r.cpu.perf_counters_per_step:
        add("perf counters per step", counters_text(r.cpu.perf_counters_per_step))
    if r.cpu.perf_counters_run:
        add("perf counters, whole run", counters_text(r.cpu.perf_counters_run))
    if r.cpu.freq_khz:
        add("cpu freq MHz (per core)", "  ".join(f"{f / 1e3:.0f}" if f else "-" for f in r.cpu.freq_khz))
    if r.temperature_c:
        add("temperature °C (max)", "  ".join(f"{k} {v.max:.1f}" for k, v in r.temperature_c.items()))
    if r.throttling:
        add("thermal throttling", throttling_text(r.throttling))
    add("energy", energy_text(r))
    if r.energy.by_rail and len(r.energy.by_rail) > 1:
        rails = "  ".join(f"{k} {v.avg_power_w:.2f} W" for k, v in r.energy.by_rail.items())
        add("power by rail (mean)", rails)
    estimate = r.estimated_energy
    if estimate is not None and estimate.energy_j is not None:
        add(
            "energy (estimated)",
            f"{estimate.energy_j:.3f} J, {estimate.per_step_j:.4f} J/step, mean {estimate.avg_power_w:.2f} W  "
            f"[{estimate.source}]",
        )
    if r.gpu_util_pct:
        table.add_row(
            "gpu util % (per gpu)", f"mean {r.gpu_util_pct.mean or 0:.1f}   [{_pcts(r.gpu_util_pct.per_gpu)}]"
        )
    for note in r.energy.notes or []:
        table.add_row("[yellow]energy note[/yellow]", rich_text(note))
    if r.accuracy is not None:
        table.add_row("time to accuracy", _accuracy(r))
    if r.loss:
        flag = "" if r.loss.finite else "  [red]non-finite loss[/red]"
        table.add_row("loss", f"{_loss(r.loss.first)} -> {_loss(r.loss.last)}{flag}")  # numbers and markup
    if r.predictability:
        add("predictability", _predictability(r))
    if r.trace_summary:
        what = "modules" if r.trace_summary.granularity == "layers" else "op names"
        add(
            "trace",
            f"{r.trace_summary.granularity}: {r.trace_summary.spans} spans of {r.trace_summary.labels} {what}, "
            f"{r.trace_summary.covered_pct:.0f}% of the step; see `edgebench layers {r.trial_id}`, "
            f"`edgebench trace {r.trial_id} -o trace.json`",
        )
    if r.sampler:
        missing = ", ".join(r.sampler.unavailable) or "none"
        which = f"{r.sampler.kind}: " if r.sampler.kind else ""
        why = f" ({r.sampler.why})" if r.sampler.why else ""
        add(
            "sampler",
            f"{which}{r.sampler.samples} samples every {r.sampler.interval_ms:g} ms, "
            f"{r.sampler.cpu_pct_of_core:.2f}% of a core; not read: {missing}{why}",
        )
    device = r.device
    add("environment", f"{device.cpu_model} | {framework_text(r)} | {device.kernel}")
    return table


def _predictability(r: TrialResult) -> str:
    p = r.predictability
    assert p is not None
    text = f"step cv {p.step_time_cv:.1%}: ±5% needs {p.steps_for_ci_5pct} steps, ±1% {p.steps_for_ci_1pct} (95% CI)"
    if p.utilization_periodicity_mean is not None:
        text += f"; utilization periodicity at the step period {p.utilization_periodicity_mean:.2f}"
    elif p.periodicity_note:
        text += f"; periodicity: {p.periodicity_note}"
    s = r.series_periodicity
    for what, series in (("GPU", s.gpu if s else None), ("power", s.power if s else None)):
        shown = [f"{k} {v:.2f}" for k, v in (series or {}).items() if v is not None]
        if shown:
            text += f"; {what} periodicity {', '.join(shown)}"
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


def _loss(value: float | None) -> str:
    return "not finite" if value is None else f"{value:.4f}"
