"""``edgebench frameworks``: DNNTune's table 5 (frameworks x precisions per model) for this device."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from edgebench.cli.feasibility import (
    DEFAULT_TIMEOUT,
    FLAGS,
    CoresSetting,
    FrequencySetting,
    ThreadsSetting,
    TimeoutSetting,
)
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
)
from edgebench.cli.plans import PlanFlags, interrupted_line, keyed, run_plan
from edgebench.config.trial import make_trial
from edgebench.markup import rich_text
from edgebench.units import format_size, parse_shape

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult
    from edgebench.report.frameworks import Cell
    from edgebench.sweep.plan import PlannedTrial

#: DNNTune compared frameworks; these are the backends a user has today (each listed even when not installed).
DEFAULT_BACKENDS = "torch,onnxruntime,mnn"


def _names(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise ValueError(f"{text!r} names nothing; give a comma-separated list")
    return list(dict.fromkeys(names))


def frameworks(
    models: Annotated[str, typer.Option(help="Models, comma-separated.")] = "lenet,mobilenet_v2",
    mode: Annotated[str, typer.Option(help="infer (forward passes) or train (training steps).")] = "infer",
    backends: Annotated[str, typer.Option(help="Backends to compare, comma-separated.")] = DEFAULT_BACKENDS,
    precisions: Annotated[
        str | None, typer.Option(help="Precisions, comma-separated [default: fp32,int8 to infer, fp32 to train].")
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option("--batch-size", "-b", help="Batch [default: 1 to infer, 32 to train].")
    ] = None,
    input_shape: Annotated[
        str | None, typer.Option(help="Per-sample input for every model, e.g. 3x64x64 [default: each model's].")
    ] = None,
    steps: Annotated[int, typer.Option(help="Measured steps per cell.")] = 20,
    warmup: Annotated[int, typer.Option(help="Warm-up steps per cell.")] = 3,
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
    """Compare backends and precisions on each model: latency, energy, peak memory, accuracy change (DNNTune's
    table 5), every cell a stored trial."""
    from edgebench.cli import fail
    from edgebench.launch.trial import resolve_placement
    from edgebench.report.frameworks import plan_cells, take_results
    from edgebench.sweep.plan import trial_key

    model_names = parse("--models", models, _names) or []
    names = [build(make_trial, {"model": m}, {"model": "--models"}).model for m in model_names]
    backend_names = parse("--backends", backends, _names) or []
    from edgebench.errors import UsageError
    from edgebench.registry import BACKENDS

    unknown = [b for b in backend_names if b not in BACKENDS]
    if backend_names and len(unknown) == len(backend_names):
        # nothing to run: refused, nothing planned or stored (beside a known backend, an unknown one is a cell
        # of the table saying why it was not run, as DNNTune's framework list has tflite)
        raise UsageError(
            "--backends",
            f"{', '.join(unknown)}: not a backend of this edgebench; choose from {', '.join(BACKENDS.names())}",
        )
    default_precisions = "fp32,int8" if mode == "infer" else "fp32"
    precision_names = parse("--precisions", precisions or default_precisions, _names) or []
    flags = PlanFlags(target_spec, root, cores, frequency, threads, timeout, cooldown, resume, store, no_store)
    target = flags.open_target()
    values = {
        "model": names[0],
        "mode": mode,
        "batch_size": batch_size or (1 if mode == "infer" else 32),
        "input_shape": parse("--input-shape", input_shape, parse_shape),
        "steps": steps,
        "warmup": warmup,
        "infer_steps": 0,
        **flags.trial_values(target),
    }
    base = build(make_trial, values, {"batch_size": "--batch-size", **FLAGS})
    for precision in precision_names:  # a precision no backend knows is the user's typo, not a cell's reason
        build(make_trial, {"precision": precision, "mode": "infer"}, {"precision": "--precisions"})
    resolve_placement(base, target)  # a bad --cores or --threads fails before anything starts
    cells = plan_cells(base, names, backend_names, precision_names, target)

    def unrunnable() -> None:  # decided before anything runs, told once the store is checked
        for c in cells:
            if c.trial is None:
                print(f"{c.model} {c.backend} {c.precision}: not run ({c.reason})", file=sys.stderr, flush=True)

    def progress(planned: PlannedTrial, result: TrialResult) -> None:
        t = planned.trial
        line = f"{t.model} {t.backend} {t.precision}: {result.status}"
        print(line + (f" ({result.status}: {result.reason})" if not result.ok else ""), file=sys.stderr, flush=True)

    config = {"mode": mode, "models": names, "backends": backend_names, "precisions": precision_names}
    planned = keyed([c.trial for c in cells if c.trial])
    run = run_plan("frameworks", planned, flags, target, config=config, on_result=progress, begin=unrunnable)
    if run.interrupted:
        return fail(interrupted_line(run), 130)
    take_results(cells, lambda trial: run.results.get(trial_key(trial)))
    if as_json:
        from edgebench.report.frameworks import as_json as cells_json
        from edgebench.report.frameworks import energy_reason

        out = {"mode": mode, "batch_size": base.batch_size, "energy_note": energy_reason(cells),
               "cells": cells_json(cells)}  # fmt: skip
        typer.echo(json.dumps(out, indent=2))
        return 0
    print_table(cells, mode, base.batch_size)
    return 0


def print_table(cells: list[Cell], mode: str, batch_size: int) -> None:
    from rich.console import Console
    from rich.table import Table

    from edgebench.report.frameworks import energy_reason

    what = "inference (forward pass)" if mode == "infer" else "training step"
    table = Table(
        title=f"Frameworks on this device: {what}, batch {batch_size} (best of each model's column in bold *)",
        title_justify="left",
    )
    for column, justify in (("model", "left"), ("backend", "left"), ("precision", "left"), ("latency ms", "right"),
                            ("median ms", "right"),
                            ("energy J", "right"), ("peak memory", "right"), ("top-1 agree", "right"),
                            ("accuracy change", "right"), ("trial / reason", "left")):  # fmt: skip
        table.add_column(column, justify=justify)  # type: ignore[arg-type]

    def mark(cell: Cell, column: str, text: str) -> str:
        return f"[bold]*{rich_text(text)}[/bold]" if column in cell.best else rich_text(text)

    for c in cells:
        f = c.figures()
        latency = "" if f["latency_ms"] is None else f"{f['latency_ms']:.2f}"
        median = c.result.latency.step_ms.median if c.measured and c.result and c.result.latency.step_ms else None
        energy = "" if f["energy_j"] is None else f"{f['energy_j']:.4f}"
        memory = "" if f["peak_memory_bytes"] is None else format_size(f["peak_memory_bytes"])
        agree = "" if f["top1_agreement"] is None else f"{100 * f['top1_agreement']:.1f}%"
        change = "" if f["accuracy_change"] is None else f"{100 * f['accuracy_change']:+.1f} pt"
        if c.measured and c.precision == "fp32":
            agree, change = "(reference)", "(reference)"
        where = c.result.trial_id if c.measured and c.result else (c.reason or "")
        table.add_row(
            rich_text(c.model),
            rich_text(c.backend),
            rich_text(c.precision),
            mark(c, "latency_ms", latency),
            "" if median is None else f"{median:.2f}",
            mark(c, "energy_j", energy) if energy else ("-" if c.measured else ""),
            mark(c, "peak_memory_bytes", memory),
            mark(c, "top1_agreement", agree),
            mark(c, "accuracy_change", change),
            rich_text(where),
        )
    Console(width=200).print(table)
    from edgebench.report.warnings import hygiene_warnings

    for line in hygiene_warnings(c.result for c in cells if c.result is not None):
        print(line)
    reason = energy_reason(cells)
    if reason:
        print(f"energy: {reason}")
    notes = {q for c in cells if c.result and c.result.quantization for q in (c.result.quantization.notes or [])}
    for c in cells:
        q = c.result.quantization if c.result else None
        if q is not None:
            print(f"{c.model} {c.backend} int8: {q.method}; calibration: {q.calibration}")
    for note in sorted(notes):
        print(f"note: {note}")
