"""DNNTune's table 5 on the user's device: every model on every backend at every precision, each cell stored trials
(its repeats: latency, energy, peak memory, agreement with fp32) or the one-line reason it cannot run here; a
column's best starred only where it is clear across repeats."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from edgebench.workflows.common import Notify, quiet
from edgebench.workflows.plans import PlanOptions, PlanRun

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult
    from edgebench.report.frameworks import Cell
    from edgebench.sweep.plan import PlannedTrial

#: DNNTune compared frameworks; these are the backends a user has today (each listed even when not installed).
DEFAULT_BACKENDS = ("torch", "onnxruntime", "mnn", "litert", "executorch")


@dataclass(frozen=True)
class FrameworksRequest:
    """The table asked for.  Lists may be given as comma-separated text (as the flags are); None precisions are
    fp32 and int8 to infer, fp32 to train; None batch is 1 to infer, 32 to train; None input is each model's."""

    models: Sequence[str] | str = ("lenet", "mobilenet_v2")
    mode: str = "infer"
    backends: Sequence[str] | str = DEFAULT_BACKENDS
    precisions: Sequence[str] | str | None = None
    batch_size: int | None = None
    input_shape: tuple[int, ...] | str | None = None
    steps: int = 20
    warmup: int = 3
    options: PlanOptions = field(default_factory=PlanOptions)


@dataclass(frozen=True)
class FrameworksTable:
    """The cells (model x backend x precision, each measured or with its reason, the best of each column marked),
    the mode and batch they ran at, and the plan's run (``run.interrupted``: what finished is stored)."""

    cells: list[Cell]
    mode: str
    batch_size: int
    run: PlanRun
    #: Why a model's column has no star (no clear best across repeats, one repeat each), and disturbed repeats.
    notes: list[str] = field(default_factory=list)


def names(text: str) -> list[str]:
    """``a,b,a`` as ``[a, b]``: a comma-separated list, each name once."""
    listed = [t.strip() for t in text.split(",") if t.strip()]
    if not listed:
        raise ValueError(f"{text!r} names nothing; give a comma-separated list")
    return list(dict.fromkeys(listed))


def _listed(flag: str, value: Sequence[str] | str) -> list[str]:
    from edgebench.config.flags import parse

    return (parse(flag, value, names) or []) if isinstance(value, str) else list(dict.fromkeys(value))


def run_frameworks(request: FrameworksRequest, *, notify: Notify = quiet) -> FrameworksTable:
    """Plan every cell, run the runnable ones as one plan, and read the table back from their results.

    A model, backend or precision nobody knows is refused before anything runs; a backend this device cannot run
    is a cell with its reason.  ``notify`` hears the unrunnable cells once the store is checked, and a line per
    trial as it ends.
    """
    from edgebench.config.flags import build, parse
    from edgebench.config.trial import make_trial
    from edgebench.launch.trial import resolve_placement
    from edgebench.records.trial import Trial
    from edgebench.report.frameworks import plan_cells, take_results
    from edgebench.units import parse_shape
    from edgebench.workflows.plans import PLACEMENT_FLAGS, keyed, run_plan

    mode = request.mode
    models = [build(make_trial, {"model": m}, {"model": "--models"}).model for m in _listed("--models", request.models)]
    backends = _check_backends(_listed("--backends", request.backends))
    precisions = _listed("--precisions", request.precisions or ("fp32,int8" if mode == "infer" else "fp32"))
    target = request.options.open_target()
    shape = request.input_shape
    values = {
        "model": models[0],
        "mode": mode,
        "batch_size": request.batch_size or (1 if mode == "infer" else 32),
        "input_shape": parse("--input-shape", shape, parse_shape) if isinstance(shape, str) else shape,
        "steps": request.steps,
        "warmup": request.warmup,
        "infer_steps": 0,
        **request.options.trial_values(target),
    }
    base = build(make_trial, values, {"batch_size": "--batch-size", **PLACEMENT_FLAGS})
    for precision in precisions:  # a precision no backend knows is the user's typo, not a cell's reason
        build(Trial, {"precision": precision, "mode": "infer"}, {"precision": "--precisions"})
    resolve_placement(base, target)  # a bad --cores or --threads fails before anything starts
    cells = plan_cells(base, models, backends, precisions, target)

    def unrunnable() -> None:  # decided before anything runs, told once the store is checked
        for c in cells:
            if c.trial is None:
                notify(f"{c.model} {c.backend} {c.precision}: not run ({c.reason})")

    def progress(planned: PlannedTrial, result: TrialResult) -> None:
        t = planned.trial
        line = f"{t.model} {t.backend} {t.precision}: {result.status}"
        notify(line + (f" ({result.status}: {result.reason})" if not result.ok else ""))

    config = {"mode": mode, "models": models, "backends": backends, "precisions": precisions}
    planned = keyed([c.trial for c in cells if c.trial])
    run = run_plan("frameworks", planned, request.options, target, config=config, on_result=progress,
                   begin=unrunnable, notify=notify)  # fmt: skip
    notes = []
    if not run.interrupted:
        notes = take_results(cells, lambda trial: run.repeats_of(trial))
    return FrameworksTable(cells, mode, base.batch_size, run, notes)


def _check_backends(backends: list[str]) -> list[str]:
    """Refuse a list of which no backend is known (nothing to run); beside a known backend, an unknown one is a cell
    of the table saying why it was not run, as DNNTune's framework list has MACE."""
    from edgebench.errors import UsageError
    from edgebench.registry import BACKENDS

    unknown = [b for b in backends if b not in BACKENDS]
    if backends and len(unknown) == len(backends):
        raise UsageError(
            "--backends",
            f"{', '.join(unknown)}: not a backend of this edgebench; choose from {', '.join(BACKENDS.names())}",
        )
    return backends
