"""``edgebench feasibility``: the characterization paper's "successful training?" table for a memory budget."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from edgebench.cli.options import say
from edgebench.cli.plans import PlanFlags, interrupted_line, plan_command
from edgebench.workflows.feasibility import FeasibilityRequest


@plan_command()
def feasibility(
    memory_budget: Annotated[str, typer.Option(help="Memory each training trial may use, e.g. 8GiB (the TX2's).")],
    model: Annotated[
        list[str] | None, typer.Option("--model", "-m", help="A model to try (repeat) [default: the paper's 16].")
    ] = None,
    batch_sizes: Annotated[str, typer.Option(help="Batch sizes to try, e.g. 1,2,4.")] = ",".join(
        map(str, FeasibilityRequest.batch_sizes)
    ),
    preset: Annotated[
        str, typer.Option(help="Input preset where a model has it (the paper trained vision models on CIFAR-10).")
    ] = FeasibilityRequest.preset,
    steps: Annotated[int, typer.Option(help="Measured training steps per trial.")] = FeasibilityRequest.steps,
    warmup: Annotated[int, typer.Option(help="Warm-up steps per trial (the optimizer's state appears here).")] = (
        FeasibilityRequest.warmup
    ),
    *,
    flags: PlanFlags,
) -> int:
    """Train each model for a step at each batch size within a memory budget: does it fit, and at what peak?"""
    from edgebench.cli import fail
    from edgebench.report.feasibility import feasibility_json, print_feasibility
    from edgebench.workflows.feasibility import run_feasibility

    request = FeasibilityRequest(memory_budget, model, batch_sizes, preset, steps, warmup, flags.options)
    table = run_feasibility(request, notify=say)
    if table.run.interrupted:
        return fail(interrupted_line(table.run), 130)
    if flags.as_json:
        typer.echo(json.dumps(feasibility_json(table.budget_bytes, table.preset, table.batch_sizes, table.rows),
                              indent=2))  # fmt: skip
    else:
        print_feasibility(table.budget_bytes, table.batch_sizes, table.rows, table.by_category)
    return 0
