"""``edgebench feasibility``: the characterization paper's "successful training?" table for a memory budget."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Annotated

import typer

from edgebench.cli.options import CoresOption, JsonOption, NoStoreOption, StoreOption, ThreadsOption, build, parse
from edgebench.cli.recording import recorded_runs
from edgebench.config.trial import make_trial
from edgebench.host.cpuset import parse_cores
from edgebench.host.sysfs import SysFS
from edgebench.units import format_size, parse_duration_s, parse_size_bytes


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
    threads: ThreadsOption = None,
    cores: CoresOption = None,
    timeout: Annotated[str, typer.Option(help="Give up on one trial after this long.")] = "10m",
    as_json: JsonOption = False,
    store: StoreOption = None,
    no_store: NoStoreOption = False,
) -> int:
    """Train each model for a step at each batch size within a memory budget: does it fit, and at what peak?"""
    from edgebench.runner.feasibility import PAPER_MODELS
    from edgebench.runner.feasibility import feasibility as run_feasibility
    from edgebench.runner.launch import resolve_placement
    from edgebench.targets import open_target

    names = [build(make_trial, {"model": name}, {}).model for name in model or PAPER_MODELS]  # each checked, one line
    sizes = parse("--batch-sizes", batch_sizes, _batch_sizes)
    base = build(
        make_trial,
        {
            "model": names[0],
            "steps": steps,
            "warmup": warmup,
            "threads": threads,
            "cores": parse("--cores", cores, parse_cores),
            "infer_steps": 0,
            "timeout_s": parse("--timeout", timeout, parse_duration_s),
            "memory_budget_bytes": parse("--memory-budget", memory_budget, parse_size_bytes),
        },
        {"timeout_s": "--timeout", "memory_budget_bytes": "--memory-budget"},
    )
    target = open_target()
    resolve_placement(base, target)
    budget = base.memory_budget_bytes or 0
    _warn_if_device_is_smaller(budget, target.sysfs())

    def progress(name: str, cell: object) -> None:
        peak = getattr(cell, "peak_memory_bytes", None)
        shown = format_size(peak) if peak else "-"
        print(f"{name} batch {cell.batch_size}: {cell.status} (peak {shown})", file=sys.stderr, flush=True)  # type: ignore[attr-defined]

    with recorded_runs(store, no_store, target, sample=False) as run:
        rows = run_feasibility(base, names, sizes, preset, run, progress)  # type: ignore[arg-type]
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
                    "cells": [asdict(c) for c in r.cells],
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
            cells.append(f"{marks.get(c.status, c.status)} {peak}".strip())
        verdict = {"yes": "[green]✓[/green]", "partly": "[yellow]partly[/yellow]", "no": "[red]✗[/red]"}[r.successful]
        table.add_row(r.model, r.preset, *cells, verdict)
    Console().print(table)
    return 0


def _warn_if_device_is_smaller(budget_bytes: int, sysfs: SysFS) -> None:
    from edgebench.runner.budget import available_memory_bytes

    available = available_memory_bytes(sysfs)
    if available is not None and budget_bytes > available:
        print(
            f"edgebench: warning: the {format_size(budget_bytes)} budget is more than this host has available "
            f"({format_size(available)}); a trial the kernel kills for memory is recorded as infeasible",
            file=sys.stderr,
        )
