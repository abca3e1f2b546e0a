"""``edgebench frameworks``: DNNTune's table 5 (frameworks x precisions per model) for this device."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from edgebench.cli.options import say
from edgebench.cli.plans import PlanFlags, interrupted_line, plan_command
from edgebench.workflows.frameworks import FrameworksRequest


@plan_command()
def frameworks(
    models: Annotated[str, typer.Option("--models", "-m", help="Models, comma-separated.")] = ",".join(
        FrameworksRequest.models
    ),
    mode: Annotated[
        str, typer.Option(help="infer (forward passes) or train (training steps).")
    ] = FrameworksRequest.mode,
    backends: Annotated[str, typer.Option(help="Backends to compare, comma-separated.")] = ",".join(
        FrameworksRequest.backends
    ),
    precisions: Annotated[
        str | None, typer.Option(help="Precisions, comma-separated [default: fp32,int8 to infer, fp32 to train].")
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option("--batch-size", "-b", help="Batch [default: 1 to infer, 32 to train].")
    ] = None,
    input_shape: Annotated[
        str | None, typer.Option(help="Per-sample input for every model, e.g. 3x64x64 [default: each model's].")
    ] = None,
    steps: Annotated[int, typer.Option(help="Measured steps per cell.")] = FrameworksRequest.steps,
    warmup: Annotated[int, typer.Option(help="Warm-up steps per cell.")] = FrameworksRequest.warmup,
    *,
    flags: PlanFlags,
) -> int:
    """Compare backends and precisions on each model: latency, energy, peak memory, accuracy change (DNNTune's
    table 5), every cell stored trials; a column's best starred where it is clear across --repeats."""
    from edgebench.cli import fail
    from edgebench.report.frameworks import as_json, energy_reason, print_table
    from edgebench.workflows.frameworks import run_frameworks

    request = FrameworksRequest(models, mode, backends, precisions, batch_size, input_shape, steps, warmup,
                                flags.options)  # fmt: skip
    table = run_frameworks(request, notify=say)
    if table.run.interrupted:
        return fail(interrupted_line(table.run), 130)
    if flags.as_json:
        out = {"mode": table.mode, "batch_size": table.batch_size, "energy_note": energy_reason(table.cells),
               "cells": as_json(table.cells), "notes": table.notes}  # fmt: skip
        typer.echo(json.dumps(out, indent=2))
    else:
        print_table(table.cells, table.mode, table.batch_size, table.notes)
    return 0
