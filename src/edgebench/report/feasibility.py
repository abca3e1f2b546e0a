"""What ``feasibility`` prints: the "successful training?" table (a cell per batch size: fitted or not, the peak,
the prediction and whether it held), each model's prediction basis, memory by category; or the same as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from edgebench.markup import rich_text
from edgebench.units import format_size

if TYPE_CHECKING:
    from edgebench.agents.python.feasibility import Row
    from edgebench.records.result import TrialResult

MARKS = {"ok": "[green]✓[/green]", "infeasible": "[red]✗[/red]", "oom": "[red]✗[/red]", "skipped": "[dim]✗[/dim]"}
VERDICTS = {"yes": "[green]✓[/green]", "partly": "[yellow]partly[/yellow]", "no": "[red]✗[/red]"}


def feasibility_json(budget_bytes: int, preset: str, batch_sizes: Sequence[int], rows: list[Row]) -> dict[str, Any]:
    """``feasibility --json``: the budget, the preset, the batch sizes and each model's cells."""
    return {
        "memory_budget_bytes": budget_bytes,
        "preset": preset,
        "batch_sizes": list(batch_sizes),
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


def print_feasibility(
    budget_bytes: int, batch_sizes: Sequence[int], rows: list[Row], by_category: list[TrialResult]
) -> None:
    """The table, each model's prediction basis, and memory by category of the trials that measured it."""
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"Successful training within {format_size(budget_bytes)}? (peak memory of one training step)",
        title_justify="left",
    )
    table.add_column("model")
    table.add_column("input")
    for size in batch_sizes:
        table.add_column(f"b={size}", justify="right")
    table.add_column("successful training?")
    for r in rows:
        cells = []
        for c in r.cells:
            peak = format_size(c.peak_memory_bytes) if c.peak_memory_bytes else ""
            guess = ""
            if c.predicted_peak_bytes is not None:
                shown = format_size(c.predicted_peak_bytes)
                guess = f"\n[dim]{rich_text(f'pred. {shown}: {c.prediction}, {c.prediction_check}')}[/dim]"
            cells.append(f"{MARKS.get(c.status, rich_text(c.status))} {peak}".strip() + guess)
        table.add_row(rich_text(r.model), rich_text(r.preset), *cells, VERDICTS[r.successful])
    console = Console()
    console.print(table)
    for r in rows:
        if r.growth_basis:
            console.print(rich_text(f"{r.model}: predictions {r.growth_basis}"))
    if by_category:  # the paper's Figure 9 as a table: memory by category per model and batch size, measured
        from edgebench.report.memory import category_table

        console.print(category_table(by_category))
