"""``edgebench run``: train one model on this device and report how it went."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import build, parse, sysfs_root
from edgebench.host.cpuset import parse_cores
from edgebench.trial import Trial
from edgebench.units import parse_duration_s, parse_percent, parse_shape, parse_size_bytes

FLAGS = {
    "sample_interval_ms": "--interval",
    "timeout_s": "--timeout",
    "idle_s": "--idle",
    "estimate_energy": "--estimate-energy",
    "target_ci_pct": "--target-ci",
    "max_time_s": "--max-time",
    "memory_budget_bytes": "--memory-budget",
}


def run(
    model: Annotated[str, typer.Option("--model", "-m", help="Workload name (see `edgebench models`).")] = "lenet",
    batch_size: Annotated[int, typer.Option("--batch-size", "-b", help="Samples per training step.")] = 32,
    steps: Annotated[
        int | None, typer.Option(help="Measured training steps (with --target-ci: the minimum) [default: 20; 5].")
    ] = None,
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
    precision: Annotated[str, typer.Option(help="fp32, or autocast mixed precision bf16 / fp16.")] = "fp32",
    target_ci: Annotated[
        str | None,
        typer.Option(help="Step until the 95% CI of the mean step time is within this much of it, e.g. 2%."),
    ] = None,
    max_time: Annotated[str, typer.Option(help="With --target-ci: stop after this long anyway, e.g. 2m.")] = "120s",
    seed: Annotated[int, typer.Option(help="Seed for weights and synthetic data.")] = 0,
    preset: Annotated[
        str | None, typer.Option(help="Named input of the workload (cifar10, imagenet...; see `edgebench models`).")
    ] = None,
    data: Annotated[
        str | None, typer.Option(help="Train on real data that ships offline: mnist (images), shakespeare (text).")
    ] = None,
    until_accuracy: Annotated[
        float | None, typer.Option(help="Train until held-out accuracy reaches this (0-1]; needs --data.")
    ] = None,
    eval_every: Annotated[int, typer.Option(help="With --until-accuracy: evaluate every N steps.")] = 50,
    max_steps: Annotated[
        int | None,
        typer.Option(
            help="With --target-ci or --until-accuracy: stop after N measured steps anyway "
            "[default: 2000 with --target-ci; only --timeout with --until-accuracy]."
        ),
    ] = None,
    memory_budget: Annotated[
        str | None, typer.Option(help="The trial may use at most this memory, e.g. 8GiB; over it: infeasible.")
    ] = None,
    trace: Annotated[
        str, typer.Option(help="Record per-step spans: none, layers (nn.Module fwd/bwd) or ops (aten, profiler).")
    ] = "none",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
    store: Annotated[
        Path | None, typer.Option(help="SQLite store [default: $EDGEBENCH_STORE or ~/.local/share].")
    ] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not record the trial.")] = False,
    idle: Annotated[
        str | None,
        typer.Option(
            help="Idle baseline measured before the trial, e.g. 5s; 0 skips it [default: 5s "
            "where a power sensor exists]."
        ),
    ] = None,
    estimate_energy: Annotated[
        str | None,
        typer.Option(
            "--estimate-energy",
            help="Also estimate energy from utilization with this device's "
            "power, e.g. idle=2.7W,max=6.4W[,gpu=10W]; labelled, never in energy_j.",
        ),
    ] = None,
    sysfs_root_dir: Annotated[
        Path | None, typer.Option("--sysfs-root", help="Read sensors from a tree copied from a device, not /.")
    ] = None,
) -> int:
    """Train a model on this device: step latency, throughput, CPU use, memory, inference latency."""
    from edgebench.cli import fail

    trial = build(
        Trial,
        {
            "model": model,
            "batch_size": batch_size,
            "steps": steps if steps is not None else (20 if target_ci is None else 5),
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
            "idle_s": parse("--idle", idle, parse_duration_s),
            "estimate_energy": estimate_energy,
            "precision": precision,
            "target_ci_pct": parse("--target-ci", target_ci, parse_percent),
            "max_steps": max_steps,
            "max_time_s": parse("--max-time", max_time, parse_duration_s),
            "preset": preset,
            "data": data,
            "until_accuracy": until_accuracy,
            "eval_every": eval_every,
            "memory_budget_bytes": parse("--memory-budget", memory_budget, parse_size_bytes),
            "trace": trace,
        },
        FLAGS,
    )
    from edgebench.runner.launch import resolve_placement, run_trial
    from edgebench.targets import open_target

    target = open_target(sysfs_root=sysfs_root(sysfs_root_dir))
    resolve_placement(trial, target)  # a bad --cores fails before anything starts
    if not no_store:
        from edgebench.store import Store

        db = Store(store)  # an unwritable store fails before the trial, not after
    outcome = run_trial(trial, target=target)
    result = outcome.result
    if not no_store:
        with db:
            db.save(result, outcome.series())
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
