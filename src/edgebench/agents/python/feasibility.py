"""Which models train at which batch sizes within a memory budget: the characterization paper's "successful
training?" column, measured instead of assumed.

Each (model, batch size) is one trial in its own worker under the budget (see :mod:`edgebench.agents.python.budget`),
so a model that does not fit is recorded ``infeasible`` with the peak it reached and the host is never at risk.
Once a batch size does not fit, larger ones of the same model are skipped: memory only grows with the batch.
The trials are a plan (``edgebench feasibility`` runs it as a sweep is run); this module only lays them out and
reads the table back from their results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from edgebench.measure.memory_growth import MemoryGrowth, fit_growth
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
    #: Predicted from the growth of input and activations between the row's two smallest measured batch sizes
    #: (:mod:`edgebench.measure.memory_growth`); None for those two and where no growth was measured.
    predicted_peak_bytes: int | None = None
    #: ``fits`` or ``will not fit`` (the prediction against the budget); None without a prediction.
    prediction: str | None = None

    @property
    def prediction_check(self) -> str | None:
        """``held`` or ``missed`` where the predicted batch ran; ``not run`` where it was skipped."""
        if self.prediction is None:
            return None
        if self.status == "skipped":
            return "not run"
        fitted = self.status == "ok"
        return "held" if fitted == (self.prediction == "fits") else "missed"


@dataclass
class Row:
    model: str
    preset: str
    cells: list[Cell] = field(default_factory=list)
    #: How the predictions were made (the two batch sizes and the bytes per sample); None without predictions.
    growth_basis: str | None = None

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
    order: each model's batch sizes from the smallest, so a batch that does not fit spares the larger ones.  A cell is
    training that fits or not: a language model's generation phase is not run (``generations`` 0)."""
    from edgebench.workloads import get_workload
    from edgebench.workloads.lm import decoder_shape

    trials = []
    for model in models:
        named = preset_for(model, preset)
        generates = {"generations": 0} if decoder_shape(get_workload(model)) is not None else {}
        for batch in sorted(batch_sizes):
            preset_field = named if named != "default" else None  # "default": a workload without presets
            trials.append(
                base.model_copy(update={"model": model, "batch_size": batch, "preset": preset_field, **generates})
            )
    return trials


def blocked_by(trial: Trial, smaller: Sequence[TrialResult | None]) -> str | None:
    """Why ``trial`` need not run: a smaller batch of its model did not fit (memory only grows with the batch)."""
    for result in smaller:
        if result is not None and result.status in ("infeasible", "oom") and result.trial.batch_size < trial.batch_size:
            return f"batch {result.trial.batch_size} already did not fit"
    return None


def rows(
    models: Sequence[str],
    batch_sizes: Sequence[int],
    preset: str | None,
    result_of: Callable[[str, int], TrialResult | None],
    budget_bytes: int | None = None,
) -> list[Row]:
    """The table: each model's cells from its results (``result_of(model, batch)``); a batch after one that did
    not fit is ``skipped``.  With a budget, the batch sizes above the two smallest that trained with memory by
    category carry a predicted peak and whether it fits, to be read against what happened."""
    table = []
    for model in models:
        growth = _growth(model, batch_sizes, result_of)
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
        if growth is not None and budget_bytes:
            row.growth_basis = growth.basis()
            row.cells = [_predicted(c, growth, budget_bytes) if c.batch_size > growth.large_batch else c
                         for c in row.cells]  # fmt: skip
        table.append(row)
    return table


def _growth(model: str, batch_sizes: Sequence[int], result_of: Callable[[str, int], TrialResult | None]
            ) -> MemoryGrowth | None:  # fmt: skip
    measured = []
    for batch in sorted(batch_sizes):
        result = result_of(model, batch)
        if result is not None and result.ok and result.memory.by_category is not None:
            measured.append(result.memory.by_category)
    return fit_growth(measured)


def _predicted(cell: Cell, growth: MemoryGrowth, budget_bytes: int) -> Cell:
    peak = growth.predicted_peak_bytes(cell.batch_size)
    return replace(cell, predicted_peak_bytes=peak, prediction="fits" if peak <= budget_bytes else "will not fit")
