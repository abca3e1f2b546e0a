"""DNNTune's table 5 for this device: per model, each backend and precision's latency, energy, peak memory and
accuracy change, the best of each column marked.

DNNTune found that no framework wins on every metric; the table shows whether that holds for today's runtimes here.
Every measured cell is a stored trial (its id is in the cell).  A combination that cannot run (a backend that is
not registered or not installed, ``--mode train`` on an inference-only runtime, ``int8`` training) is a cell with
the reason, decided before anything runs; a trial that ran and failed is a cell with its status and reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from edgebench.errors import located
from edgebench.records.result import TrialResult
from edgebench.records.trial import Trial
from edgebench.units import format_size


class DeviceProbe(Protocol):
    """What planning the cells asks of the target: why a backend cannot reach a device there, or None."""

    def missing_device(self, backend: str, device: str) -> str | None: ...


@dataclass
class Cell:
    """One model x backend x precision: a trial to run, or why there is none; then its result."""

    model: str
    backend: str
    precision: str
    trial: Trial | None = None
    reason: str | None = None
    result: TrialResult | None = None
    #: Columns in which this cell is its model's best.
    best: set[str] = field(default_factory=set)

    @property
    def measured(self) -> bool:
        return self.result is not None and self.result.ok

    def figures(self) -> dict[str, float | None]:
        """The table's columns; lower is better for all but ``top1_agreement``."""
        r = self.result
        if r is None or not r.ok:
            return dict.fromkeys(COLUMNS)
        q = r.quantization
        return {
            "latency_ms": r.latency.step_ms.mean if r.latency.step_ms else None,
            "energy_j": r.energy.per_step_j,
            "peak_memory_bytes": r.memory.peak_bytes,
            # fp32 is the reference the int8 cells are compared with, so it has no figure of its own here.
            "top1_agreement": q.top1_agreement if q else None,
            "accuracy_change": q.accuracy_change if q else None,
        }


#: Column -> whether higher is better.
COLUMNS = {
    "latency_ms": False,
    "energy_j": False,
    "peak_memory_bytes": False,
    "top1_agreement": True,
    "accuracy_change": True,
}


def plan_cells(
    base: Trial, models: Iterable[str], backends: Iterable[str], precisions: Iterable[str], target: DeviceProbe
) -> list[Cell]:
    """Every combination, each with its trial or the one-line reason it cannot run on ``target`` (nothing runs
    here: the trials are a plan, run as a sweep's are)."""
    from edgebench.config.trial import check_backend, make_trial

    cells = []
    for model in models:
        for backend in backends:
            for precision in precisions:
                cell = Cell(model, backend, precision)
                cells.append(cell)
                try:
                    name = check_backend(backend)
                except ValueError:
                    cell.reason = f"{backend} is not a registered backend of this edgebench"
                    continue
                try:
                    values = base.model_dump(exclude_defaults=True)
                    cell.trial = make_trial(**{**values, "model": model, "backend": name, "precision": precision})
                except ValidationError as exc:
                    cell.reason = located(exc.errors()[0])[1]
                    continue
                missing = target.missing_device(name, cell.trial.device)
                if missing:
                    cell.reason, cell.trial = missing, None
    return cells


def take_results(cells: list[Cell], result_of: Callable[[Trial], TrialResult | None]) -> None:
    """Give every cell that has a trial its result (a failed one its status as the reason) and mark each model's
    best per column."""
    for cell in cells:
        if cell.trial is not None:
            cell.result = result_of(cell.trial)
            if cell.result is not None and not cell.result.ok:
                cell.reason = f"{cell.result.status}: {cell.result.reason}"
    mark_best(cells)


def mark_best(cells: list[Cell]) -> None:
    for model in dict.fromkeys(c.model for c in cells):
        measured = [c for c in cells if c.model == model and c.measured]
        for column, higher in COLUMNS.items():
            values = [(c.figures()[column], c) for c in measured if c.figures()[column] is not None]
            if len(values) < 2:
                continue
            best = max(v for v, _ in values) if higher else min(v for v, _ in values)
            for value, cell in values:
                if value == best:
                    cell.best.add(column)


def energy_reason(cells: list[Cell]) -> str | None:
    """Why the energy column is empty where it is (no power sensor here), from the trials' own notes."""
    for cell in cells:
        r = cell.result
        if r is not None and r.ok and r.energy.per_step_j is None:
            notes = r.energy.notes or []
            return notes[0] if notes else "no power sensor on this device: energy is not measured"
    return None


def as_json(cells: list[Cell]) -> list[dict[str, Any]]:
    return [
        {
            "model": c.model,
            "backend": c.backend,
            "precision": c.precision,
            "trial_id": c.result.trial_id if c.result else None,
            "status": c.result.status if c.result else "not run",
            "reason": c.reason,
            **c.figures(),
            "best": sorted(c.best),
            "quantization": c.result.quantization.model_dump() if c.result and c.result.quantization else None,
        }
        for c in cells
    ]


def print_table(cells: list[Cell], mode: str, batch_size: int) -> None:
    """The table (best of each model's column in bold, with a star), then the warnings, the energy note and how
    each int8 model was quantized."""
    from rich.console import Console
    from rich.table import Table

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
        return f"[bold]*{text}[/bold]" if column in cell.best else text

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
            c.model,
            c.backend,
            c.precision,
            mark(c, "latency_ms", latency),
            "" if median is None else f"{median:.2f}",
            mark(c, "energy_j", energy) if energy else ("-" if c.measured else ""),
            mark(c, "peak_memory_bytes", memory),
            mark(c, "top1_agreement", agree),
            mark(c, "accuracy_change", change),
            where,
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
            print(f"{c.model} {c.backend} {c.precision}: {q.method}; calibration: {q.calibration}")
    for note in sorted(notes):
        print(f"note: {note}")
