"""Which models train at which batch sizes within a memory budget: the characterization paper's "successful
training?" column, measured instead of assumed.

Each (model, batch size) is one trial in its own worker under the budget (see :mod:`edgebench.runner.budget`),
so a model that does not fit is recorded ``infeasible`` with the peak it reached and the host is never at risk.
Once a batch size does not fit, larger ones of the same model are skipped: memory only grows with the batch.
The trials are a plan (``edgebench feasibility`` runs it as a sweep is run); this module only lays them out and
reads the table back from their results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from edgebench.records.result import TrialResult
from edgebench.records.trial import Trial

#: The characterization paper's table II, in its order: ten that trained on the TX2 and six that did not.
PAPER_MODELS = (
    "densenet40", "resnet50", "squeezenet_1_1", "vgg16", "xception", "googlenet", "char_cnn", "dcgan", "dqn",
    "alexnet", "vgg19", "bert_base", "resnet101", "resnet152", "densenet100", "seq2seq",
)  # fmt: skip
PAPER_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64)


@dataclass(frozen=True)
class Cell:
    batch_size: int
    status: str  # a trial status, or "skipped" when a smaller batch already did not fit
    peak_memory_bytes: int | None = None
    reason: str | None = None
    trial_id: str | None = None


@dataclass
class Row:
    model: str
    preset: str
    cells: list[Cell] = field(default_factory=list)

    @property
    def successful(self) -> str:
        """``yes`` when every batch size trained, ``partly`` when some did, ``no`` when none did."""
        fits = [c.status == "ok" for c in self.cells]
        return "yes" if fits and all(fits) else "partly" if any(fits) else "no"


def preset_for(model: str, preset: str | None) -> str:
    """``preset`` where the workload has it, else the name of its default input."""
    from edgebench.workloads import get_workload

    workload = get_workload(model)
    return preset if preset is not None and preset in workload.preset_names() else workload.default_preset.name


def plan_trials(base: Trial, models: Sequence[str], batch_sizes: Sequence[int], preset: str | None) -> list[Trial]:
    """``base`` (which carries the budget, steps and placement) for every model and batch size, in the table's
    order: each model's batch sizes from the smallest, so a batch that does not fit spares the larger ones."""
    trials = []
    for model in models:
        named = preset_for(model, preset)
        for batch in sorted(batch_sizes):
            preset_field = named if named != "default" else None  # "default": a workload without presets
            trials.append(base.model_copy(update={"model": model, "batch_size": batch, "preset": preset_field}))
    return trials


def blocked_by(trial: Trial, smaller: Sequence[TrialResult | None]) -> str | None:
    """Why ``trial`` need not run: a smaller batch of its model did not fit (memory only grows with the batch)."""
    for result in smaller:
        if result is not None and result.status in ("infeasible", "oom") and result.trial.batch_size < trial.batch_size:
            return f"batch {result.trial.batch_size} already did not fit"
    return None


def rows(models: Sequence[str], batch_sizes: Sequence[int], preset: str | None,
         result_of: Callable[[str, int], TrialResult | None]) -> list[Row]:  # fmt: skip
    """The table: each model's cells from its results (``result_of(model, batch)``); a batch after one that did
    not fit is ``skipped``."""
    table = []
    for model in models:
        row = Row(model, preset_for(model, preset))
        blocked: int | None = None
        for batch in sorted(batch_sizes):
            result = result_of(model, batch)
            if blocked is not None or result is None:
                reason = f"batch {blocked} already did not fit" if blocked is not None else "not run"
                row.cells.append(Cell(batch, "skipped", reason=reason))
                continue
            row.cells.append(Cell(batch, result.status, result.memory.peak_bytes, result.reason, result.trial_id))
            if result.status in ("infeasible", "oom"):
                blocked = batch
        table.append(row)
    return table
