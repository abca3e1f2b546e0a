"""DNNTune's table 5 for this device: per model, each backend and precision's latency, energy, peak memory and
accuracy change, the best of each column marked.

DNNTune found that no framework wins on every metric; the table shows whether that holds for today's runtimes here.
Every measured cell is one or more stored trials, the repeats of its configuration (``--repeats``), each a fresh
worker process; its latency is the mean of its repeats' median step times.  A column's best is starred only where it
is clearly best across repeats (:func:`~edgebench.measure.repeats.best_of`: its interval overlaps no other cell's):
with one repeat per cell, or overlapping intervals, no star, and a line under the table says so.  A disturbed repeat
(:func:`~edgebench.measure.trust.disturbances`) never counts.  Accuracy figures (top-1 agreement, accuracy change)
come from fixed held-out data and do not vary from process to process: their best is the plain best.

A combination that cannot run (a backend that is not registered or not installed, ``--mode train`` on an
inference-only runtime, ``int8`` training) is a cell with the reason, decided before anything runs; a trial that ran
and failed is a cell with its status and reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from edgebench.errors import located
from edgebench.markup import rich_text
from edgebench.measure.repeats import best_of
from edgebench.measure.trust import left_out_note, split_disturbed
from edgebench.records.result import TrialResult
from edgebench.records.trial import Trial
from edgebench.units import format_size


class DeviceProbe(Protocol):
    """What planning the cells asks of the target: why a backend cannot reach a device there, or None."""

    def missing_device(self, backend: str, device: str) -> str | None: ...


@dataclass
class Cell:
    """One model x backend x precision: a trial to run, or why there is none; then its repeats' results."""

    model: str
    backend: str
    precision: str
    trial: Trial | None = None
    reason: str | None = None
    #: The configuration's repeats (one trial each), in index order.
    results: list[TrialResult] = field(default_factory=list)
    #: Columns in which this cell is its model's best.
    best: set[str] = field(default_factory=set)

    @property
    def result(self) -> TrialResult | None:
        """The cell's representative trial: its first successful repeat (else its first)."""
        return next((r for r in self.results if r.ok), self.results[0] if self.results else None)

    @property
    def measured(self) -> bool:
        return self.result is not None and self.result.ok

    @property
    def usable(self) -> list[TrialResult]:
        """The repeats a best pick may rest on: successful and undisturbed."""
        return split_disturbed([r for r in self.results if r.ok])[0]

    def values(self, column: str) -> list[float]:
        """One value per usable repeat of ``column``."""
        return [v for r in self.usable if (v := FIGURES[column](r)) is not None]

    def figures(self) -> dict[str, float | None]:
        """The table's columns, each the mean over the cell's successful repeats; lower is better for all but
        ``top1_agreement`` and ``accuracy_change``."""
        ok = [r for r in self.results if r.ok]
        out: dict[str, float | None] = {}
        for column, get in FIGURES.items():
            values = [v for r in ok if (v := get(r)) is not None]
            out[column] = sum(values) / len(values) if values else None
        return out


def _latency(r: TrialResult) -> float | None:
    s = r.latency.step_ms
    return None if s is None else (s.median if s.median is not None else s.mean)


#: Each column's figure of one repeat.  fp32 is the reference the int8 cells are compared with, so it has no
#: accuracy figure of its own.
FIGURES: dict[str, Callable[[TrialResult], float | None]] = {
    "latency_ms": _latency,
    "energy_j": lambda r: r.energy.per_step_j,
    "peak_memory_bytes": lambda r: r.memory.peak_bytes,
    "top1_agreement": lambda r: r.quantization.top1_agreement if r.quantization else None,
    "accuracy_change": lambda r: r.quantization.accuracy_change if r.quantization else None,
}


#: Column -> whether higher is better.
COLUMNS = {
    "latency_ms": False,
    "energy_j": False,
    "peak_memory_bytes": False,
    "top1_agreement": True,
    "accuracy_change": True,
}
#: Columns whose figures come from fixed data (no run-to-run variance): their best is the plain best.
FIXED = ("top1_agreement", "accuracy_change")
WORDS = {"latency_ms": "latency", "energy_j": "energy", "peak_memory_bytes": "peak memory",
         "top1_agreement": "top-1 agreement", "accuracy_change": "accuracy change"}  # fmt: skip


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


def take_results(cells: list[Cell], results_of: Callable[[Trial], list[TrialResult]]) -> list[str]:
    """Give every cell that has a trial its repeats' results (a cell none of whose repeats ran to its end gets the
    status as its reason), mark each model's clear best per column, and return why a column has none."""
    for cell in cells:
        if cell.trial is not None:
            cell.results = results_of(cell.trial)
            if cell.results and not cell.measured:
                first = cell.results[0]
                cell.reason = f"{first.status}: {first.reason}"
    return mark_best(cells)


def mark_best(cells: list[Cell]) -> list[str]:
    """Star each model's clearly best cell per column (across repeats, disturbed ones left out); return a line for
    each column of a model where no best is clear, and for cells left out as disturbed."""
    notes = []
    for model in dict.fromkeys(c.model for c in cells):
        measured = [c for c in cells if c.model == model and c.measured]
        for c in measured:
            if note := left_out_note(split_disturbed([r for r in c.results if r.ok])[1], len(c.results)):
                notes.append(f"{model} {c.backend} {c.precision}: {note}")
        for column, higher in COLUMNS.items():
            candidates = {f"{c.backend} {c.precision}": c.values(column) for c in measured if c.values(column)}
            if len(candidates) < 2:
                continue
            if column in FIXED:
                means = {k: sum(v) / len(v) for k, v in candidates.items()}
                best = (max if higher else min)(means.values())
                chosen = {k for k, v in means.items() if v == best}
            else:
                found = best_of(candidates, lower_is_better=not higher, what=WORDS[column])
                chosen = {found.label} if found.clear else set()
                if not found.clear:
                    notes.append(f"{model} {WORDS[column]}: {found.answer}")
            for c in measured:
                if f"{c.backend} {c.precision}" in chosen:
                    c.best.add(column)
    return notes


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
            "trial_ids": [r.trial_id for r in c.results],
            "repeats": len(c.results),
            "status": c.result.status if c.result else "not run",
            "reason": c.reason,
            **c.figures(),
            "mean_step_ms": _mean([r.latency.step_ms.mean for r in c.results if r.ok and r.latency.step_ms]),
            "best": sorted(c.best),
            "quantization": c.result.quantization.model_dump() if c.result and c.result.quantization else None,
        }
        for c in cells
    ]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def print_table(cells: list[Cell], mode: str, batch_size: int, notes: list[str] = ()) -> None:  # type: ignore[assignment]
    """The table (the clear best of each model's column in bold, with a star), then why a column has no star, the
    warnings, the energy note and how each int8 model was quantized."""
    from rich.console import Console
    from rich.table import Table

    what = "inference (forward pass)" if mode == "infer" else "training step"
    table = Table(
        title=f"Frameworks on this device: {what}, batch {batch_size} (clear best of each model's column in bold *)",
        title_justify="left",
    )
    for column, justify in (("model", "left"), ("backend", "left"), ("precision", "left"), ("median ms", "right"),
                            ("mean ms", "right"), ("repeats", "right"),
                            ("energy J", "right"), ("peak memory", "right"), ("top-1 agree", "right"),
                            ("accuracy change", "right"), ("trial / reason", "left")):  # fmt: skip
        table.add_column(column, justify=justify)  # type: ignore[arg-type]

    def mark(cell: Cell, column: str, text: str) -> str:
        return f"[bold]*{rich_text(text)}[/bold]" if column in cell.best else rich_text(text)

    for c in cells:
        f = c.figures()
        latency = "" if f["latency_ms"] is None else f"{f['latency_ms']:.2f}"
        mean = _mean([r.latency.step_ms.mean for r in c.results if r.ok and r.latency.step_ms])
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
            "" if mean is None else f"{mean:.2f}",
            str(len(c.results)) if c.results else "",
            mark(c, "energy_j", energy) if energy else ("-" if c.measured else ""),
            mark(c, "peak_memory_bytes", memory),
            mark(c, "top1_agreement", agree),
            mark(c, "accuracy_change", change),
            rich_text(where),
        )
    Console(width=200).print(table)
    for note in notes:
        print(f"no star: {note}" if "left out" not in note else f"note: {note}")
    from edgebench.report.warnings import hygiene_warnings

    for line in hygiene_warnings(r for c in cells for r in c.results):
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
