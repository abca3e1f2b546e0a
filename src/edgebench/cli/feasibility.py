"""``edgebench feasibility``: the characterization paper's "successful training?" table for a memory budget."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.options import (
    CooldownOption,
    JsonOption,
    NoStoreOption,
    ResumeOption,
    RootOption,
    StoreOption,
    TargetOption,
    build,
    parse,
    setting_default,
    setting_option,
)
from edgebench.cli.plans import PlanFlags, interrupted_line, keyed, run_plan
from edgebench.config.settings import BY_FIELD
from edgebench.config.trial import make_trial
from edgebench.host.sysfs import SysFS
from edgebench.markup import rich_text
from edgebench.units import format_size, parse_size_bytes

if TYPE_CHECKING:
    from rich.console import Console

    from edgebench.records.result import TrialResult
    from edgebench.sweep.plan import PlannedTrial

ThreadsSetting = setting_option("threads")
CoresSetting = setting_option("cores")
FrequencySetting = setting_option("freq_khz")
TimeoutSetting = setting_option("timeout_s")
#: ``--timeout``'s default: every command's, from the settings' declaration.
DEFAULT_TIMEOUT = setting_default("timeout_s")


def _batch_sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(t) for t in text.replace(" ", "").split(",") if t)
    except ValueError:
        raise ValueError(f"{text!r} is not a list of batch sizes such as 1,2,4,8") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"{text!r}: batch sizes are whole numbers >= 1")
    return tuple(sorted(set(sizes)))


def feasibility(
    memory_budget: Annotated[str, typer.Option(help="Memory each training trial may use, e.g. 8GiB (the TX2's).")],
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="A model to try (repeat) [default: the paper's 16].")
    ] = None,
    batch_sizes: Annotated[str, typer.Option(help="Batch sizes to try, e.g. 1,2,4.")] = "1,2,4,8,16,32,64",
    preset: Annotated[
        str, typer.Option(help="Input preset where a model has it (the paper trained vision models on CIFAR-10).")
    ] = "cifar10",
    steps: Annotated[int, typer.Option(help="Measured training steps per trial.")] = 1,
    warmup: Annotated[int, typer.Option(help="Warm-up steps per trial (the optimizer's state appears here).")] = 1,
    threads: ThreadsSetting = None,
    cores: CoresSetting = None,
    frequency: FrequencySetting = None,
    timeout: TimeoutSetting = DEFAULT_TIMEOUT,
    cooldown: CooldownOption = None,
    resume: ResumeOption = False,
    target_spec: TargetOption = None,
    root: RootOption = False,
    as_json: JsonOption = False,
    store: StoreOption = None,
    no_store: NoStoreOption = False,
) -> int:
    """Train each model for a step at each batch size within a memory budget: does it fit, and at what peak?"""
    from edgebench.agents.python.feasibility import PAPER_MODELS, blocked_by, plan_trials
    from edgebench.agents.python.feasibility import rows as table_rows
    from edgebench.cli import fail
    from edgebench.launch.trial import resolve_placement

    names = [build(make_trial, {"model": name}, {}).model for name in model or PAPER_MODELS]  # each checked, one line
    sizes = parse("--batch-sizes", batch_sizes, _batch_sizes) or ()
    flags = PlanFlags(target_spec, root, cores, frequency, threads, timeout, cooldown, resume, store, no_store)
    target = flags.open_target()
    values = {
        "model": names[0],
        "steps": steps,
        "warmup": warmup,
        "infer_steps": 0,
        "memory_budget_bytes": parse("--memory-budget", memory_budget, parse_size_bytes),
        **flags.trial_values(target),
    }
    base = build(make_trial, values, {"memory_budget_bytes": "--memory-budget", **FLAGS})
    resolve_placement(base, target)  # a bad --cores or --threads fails before anything starts
    budget = base.memory_budget_bytes or 0
    _warn_if_device_is_smaller(budget, target.sysfs())
    planned = keyed(plan_trials(base, names, sizes, preset))
    by_cell = {(p.trial.model, p.trial.batch_size): p.key for p in planned}

    def progress(name: str, batch: int, status: str, peak: int | None) -> None:
        shown = format_size(peak) if peak else "-"
        print(f"{name} batch {batch}: {status} (peak {shown})", file=sys.stderr, flush=True)

    measured: dict[str, list[TrialResult]] = {}
    predicted: set[str] = set()

    def on_result(p: PlannedTrial, r: TrialResult) -> None:
        progress(p.trial.model, p.trial.batch_size, r.status, r.memory.peak_bytes)
        measured.setdefault(p.trial.model, []).append(r)
        if p.trial.model not in predicted:  # said once, before the larger batch sizes run
            line = prediction_line(p.trial.model, sizes, measured[p.trial.model], budget)
            if line:
                predicted.add(p.trial.model)
                print(line, file=sys.stderr, flush=True)

    def skip(p: PlannedTrial, known: Mapping[str, TrialResult]) -> str | None:
        trial = p.trial
        smaller = [known.get(by_cell[(trial.model, b)]) for b in sorted(sizes) if b < trial.batch_size]
        reason = blocked_by(trial, smaller)
        if reason is not None:
            progress(trial.model, trial.batch_size, "skipped", None)
        return reason

    run = run_plan(
        "feasibility",
        planned,
        flags,
        target,
        config={"memory_budget_bytes": budget, "preset": preset, "batch_sizes": list(sizes), "models": names},
        on_result=on_result,
        skip=skip,
        sample=False,
    )
    if run.interrupted:
        return fail(interrupted_line(run), 130)
    rows = table_rows(names, sizes, preset, lambda name, batch: run.results.get(by_cell[(name, batch)]), budget)
    if as_json:
        out = {
            "memory_budget_bytes": budget,
            "preset": preset,
            "batch_sizes": list(sizes),
            "models": [
                {
                    "model": r.model,
                    "preset": r.preset,
                    "successful": r.successful,
                    "growth_basis": r.growth_basis,
                    "cells": [{**asdict(c), "prediction_check": c.prediction_check} for c in r.cells],
                }
                for r in rows
            ],
        }
        typer.echo(json.dumps(out, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"Successful training within {format_size(budget)}? (peak memory of one training step)",
        title_justify="left",
    )
    table.add_column("model")
    table.add_column("input")
    for size in sizes:
        table.add_column(f"b={size}", justify="right")
    table.add_column("successful training?")
    marks = {"ok": "[green]✓[/green]", "infeasible": "[red]✗[/red]", "oom": "[red]✗[/red]", "skipped": "[dim]✗[/dim]"}
    for r in rows:
        cells = []
        for c in r.cells:
            peak = format_size(c.peak_memory_bytes) if c.peak_memory_bytes else ""
            guess = ""
            if c.predicted_peak_bytes is not None:
                shown = format_size(c.predicted_peak_bytes)
                guess = f"\n[dim]{rich_text(f'pred. {shown}: {c.prediction}, {c.prediction_check}')}[/dim]"
            cells.append(f"{marks.get(c.status, rich_text(c.status))} {peak}".strip() + guess)
        verdict = {"yes": "[green]✓[/green]", "partly": "[yellow]partly[/yellow]", "no": "[red]✗[/red]"}[r.successful]
        table.add_row(rich_text(r.model), rich_text(r.preset), *cells, verdict)
    console = Console()
    console.print(table)
    for r in rows:
        if r.growth_basis:
            console.print(rich_text(f"{r.model}: predictions {r.growth_basis}"))
    _print_categories(console, [x for x in run.results.values() if x.memory.by_category is not None])
    return 0


def prediction_line(model: str, sizes: tuple[int, ...], results: list[TrialResult], budget: int) -> str | None:
    """The prediction for ``model``'s larger batch sizes, once two of its trials measured memory by category."""
    from edgebench.measure.memory_growth import fit_growth

    growth = fit_growth([r.memory.by_category for r in results if r.ok and r.memory.by_category is not None])
    if growth is None or not budget:
        return None
    larger = [b for b in sizes if b > growth.large_batch]
    if not larger:
        return None
    over = [b for b in larger if growth.predicted_peak_bytes(b) > budget]
    verdict = f"will not fit from b={over[0]}" if over else "all fit"
    sizes_text = ",".join(map(str, larger))
    return f"{model}: prediction ({growth.basis()}): of b={sizes_text} {verdict} in {format_size(budget)}"


def _print_categories(console: Console, results: list[TrialResult]) -> None:
    """The paper's Figure 9 as a table: memory by category per model and batch size, measured."""
    from edgebench.report.memory import category_table

    if results:
        console.print(category_table(results))


#: The Trial fields the shared options set, by flag (an error names the flag the user typed).
FLAGS = {field: BY_FIELD[field].flag for field in ("cores", "freq_khz", "threads", "timeout_s")}


def _warn_if_device_is_smaller(budget_bytes: int, sysfs: SysFS) -> None:
    from edgebench.agents.python.budget import available_memory_bytes

    available = available_memory_bytes(sysfs)
    if available is not None and budget_bytes > available:
        print(
            f"edgebench: warning: the {format_size(budget_bytes)} budget is more than this host has available "
            f"({format_size(available)}); a trial the kernel kills for memory is recorded as infeasible",
            file=sys.stderr,
        )
