"""``edgebench run``: train one model on this device and report how it went."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import build, parse
from edgebench.host.cpuset import parse_cores
from edgebench.trial import Trial
from edgebench.units import parse_duration_s, parse_shape

FLAGS = {"sample_interval_ms": "--interval", "timeout_s": "--timeout"}


def run(
    model: Annotated[str, typer.Option("--model", "-m", help="Workload name (see `edgebench models`).")] = "lenet",
    batch_size: Annotated[int, typer.Option("--batch-size", "-b", help="Samples per training step.")] = 32,
    steps: Annotated[int, typer.Option(help="Measured training steps.")] = 20,
    warmup: Annotated[int, typer.Option(help="Warm-up steps, excluded from every statistic.")] = 3,
    threads: Annotated[int | None, typer.Option(help="Intra-op threads [default: one per core used].")] = None,
    cores: Annotated[
        str | None, typer.Option(help="Cores to run on: hex mask as taskset (f0 = cpu4-7) or list (0,2-3).")
    ] = None,
    input_shape: Annotated[str | None, typer.Option(help="Per-sample input shape, e.g. 3x32x32.")] = None,
    num_classes: Annotated[int | None, typer.Option(help="Output classes [default: the workload's].")] = None,
    interval: Annotated[str, typer.Option(help="Sampler period, e.g. 10ms.")] = "10ms",
    infer_steps: Annotated[int, typer.Option(help="Inference passes timed after training (0 = none).")] = 10,
    timeout: Annotated[str, typer.Option(help="Give up on the worker after this long, e.g. 30m.")] = "30m",
    device: Annotated[str, typer.Option(help="cpu or cuda[:N].")] = "cpu",
    seed: Annotated[int, typer.Option(help="Seed for weights and synthetic data.")] = 0,
    trace: Annotated[
        str, typer.Option(help="Record per-step spans: none, layers (nn.Module fwd/bwd) or ops (aten, profiler).")
    ] = "none",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
    store: Annotated[
        Path | None, typer.Option(help="SQLite store [default: $EDGEBENCH_STORE or ~/.local/share].")
    ] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not record the trial.")] = False,
) -> int:
    """Train a model on this device: step latency, throughput, CPU use, memory, inference latency."""
    from edgebench.cli import fail

    trial = build(
        Trial,
        {
            "model": model,
            "batch_size": batch_size,
            "steps": steps,
            "warmup": warmup,
            "threads": threads,
            "cores": parse("--cores", cores, parse_cores),
            "input_shape": parse("--input-shape", input_shape, parse_shape),
            "num_classes": num_classes,
            "sample_interval_ms": parse("--interval", interval, lambda t: parse_duration_s(t, "ms") * 1e3),
            "infer_steps": infer_steps,
            "timeout_s": parse("--timeout", timeout, parse_duration_s),
            "device": device,
            "seed": seed,
            "trace": trace,
        },
        FLAGS,
    )
    from edgebench.runner.local import resolve_placement, run_trial

    resolve_placement(trial)  # a bad --cores fails before anything starts
    if not no_store:
        from edgebench.store import Store

        db = Store(store)  # an unwritable store fails before the trial, not after
    outcome = run_trial(trial)
    result = outcome.result
    if not no_store:
        series = {"events": "\n".join(json.dumps(e) for e in outcome.events)}
        if outcome.samples_csv is not None:
            series["samples"] = outcome.samples_csv
        if outcome.spans_json is not None:
            series["spans"] = outcome.spans_json
        with db:
            db.save(result, series)
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        from edgebench.report.summary import print_summary

        print_summary(result)
    if no_store and outcome.spans_json is not None:
        typer.echo("note: with --no-store the spans are not kept for `edgebench layers` and `trace`", err=True)
    if not result.ok:
        return fail(f"trial {result.status}: {result.reason}", 1)
    return 0
