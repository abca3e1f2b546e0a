"""Which models train at which batch sizes within a memory budget (the characterization paper's "successful
training?" table), measured: each (model, batch size) one trial under the budget, run as a plan; once a batch size
does not fit, the model's larger ones are skipped, and after two measured batch sizes the rest are predicted."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from edgebench.errors import UsageError
from edgebench.units import format_size, parse_size_bytes
from edgebench.workflows.common import Notify, quiet
from edgebench.workflows.plans import PlanOptions, PlanRun

if TYPE_CHECKING:
    from edgebench.agents.python.feasibility import Row
    from edgebench.host.sysfs import SysFS
    from edgebench.records.result import TrialResult
    from edgebench.sweep.plan import PlannedTrial


@dataclass(frozen=True)
class FeasibilityRequest:
    """The table asked for: the budget (bytes, or text such as ``8GiB``), the models (None: the paper's 16), the
    batch sizes (or their text, ``1,2,4``), the input preset, and the steps of each trial."""

    memory_budget: int | str
    models: Sequence[str] | None = None
    batch_sizes: Sequence[int] | str = (1, 2, 4, 8, 16, 32, 64)
    preset: str = "cifar10"
    steps: int = 1
    warmup: int = 1
    options: PlanOptions = field(default_factory=PlanOptions)


@dataclass(frozen=True)
class FeasibilityTable:
    """The table: one row per model, a cell per batch size (the trial's status and peak, the prediction where one
    was made), and the plan's run (``run.interrupted``: the rows are empty, what finished is stored)."""

    budget_bytes: int
    preset: str
    batch_sizes: tuple[int, ...]
    models: list[str]
    rows: list[Row]
    run: PlanRun

    @property
    def by_category(self) -> list[TrialResult]:
        """The trials that measured memory by category (the paper's Figure 9)."""
        return [r for r in self.run.results.values() if r.memory.by_category is not None]


def batch_sizes(text: str) -> tuple[int, ...]:
    """``1,2,4`` as sorted distinct batch sizes, each at least 1."""
    try:
        sizes = tuple(int(t) for t in text.replace(" ", "").split(",") if t)
    except ValueError:
        raise ValueError(f"{text!r} is not a list of batch sizes such as 1,2,4,8") from None
    if not sizes or min(sizes) < 1:
        raise ValueError(f"{text!r}: batch sizes are whole numbers >= 1")
    return tuple(sorted(set(sizes)))


def run_feasibility(request: FeasibilityRequest, *, notify: Notify = quiet) -> FeasibilityTable:
    """Train each model for a step at each batch size under the budget and tabulate what fitted, at what peak.

    Every input is checked before a trial runs; ``notify`` hears a line per trial as it ends, each model's
    prediction once it is made, and a warning where the budget is more than the device has.
    """
    from edgebench.agents.python.feasibility import PAPER_MODELS, plan_trials, rows
    from edgebench.config.flags import build, parse
    from edgebench.config.trial import make_trial
    from edgebench.launch.trial import resolve_placement
    from edgebench.workflows.plans import PLACEMENT_FLAGS, keyed, run_plan

    names = [build(make_trial, {"model": name}, {}).model for name in request.models or PAPER_MODELS]
    sizes = request.batch_sizes
    sizes = (parse("--batch-sizes", sizes, batch_sizes) or ()) if isinstance(sizes, str) else tuple(sizes)
    target = request.options.open_target()
    budget = request.memory_budget
    values = {
        "model": names[0],
        "steps": request.steps,
        "warmup": request.warmup,
        "infer_steps": 0,
        "memory_budget_bytes": parse("--memory-budget", budget, parse_size_bytes)
        if isinstance(budget, str)
        else budget,
        **request.options.trial_values(target),
    }
    base = build(make_trial, values, {"memory_budget_bytes": "--memory-budget", **PLACEMENT_FLAGS})
    if base.repeats != 1:  # its batch sizes run smallest first, each skipped after one that did not fit
        raise UsageError("--repeats", "feasibility asks whether a batch fits the memory budget, which one trial of "
                         "it answers; leave --repeats out")  # fmt: skip
    resolve_placement(base, target)  # a bad --cores or --threads fails before anything starts
    budget_bytes = base.memory_budget_bytes or 0
    _warn_if_device_is_smaller(budget_bytes, target.sysfs(), notify)
    planned = keyed(plan_trials(base, names, sizes, request.preset))
    progress = _Progress(planned, sizes, budget_bytes, notify)
    config = {"memory_budget_bytes": budget_bytes, "preset": request.preset, "batch_sizes": list(sizes),
              "models": names}  # fmt: skip
    run = run_plan("feasibility", planned, request.options, target, config=config, on_result=progress.on_result,
                   skip=progress.skip, sample=False, notify=notify)  # fmt: skip
    table = [] if run.interrupted else rows(names, sizes, request.preset, progress.result_in(run), budget_bytes)
    return FeasibilityTable(budget_bytes, request.preset, sizes, names, table, run)


class _Progress:
    """The plan's progress lines, the skip of a batch size after one that did not fit, and each model's prediction
    (said once, before its larger batch sizes run)."""

    def __init__(self, planned: list[PlannedTrial], sizes: tuple[int, ...], budget: int, notify: Notify) -> None:
        self.by_cell = {(p.trial.model, p.trial.batch_size): p.key for p in planned}
        self.sizes, self.budget, self.notify = sizes, budget, notify
        self.measured: dict[str, list[TrialResult]] = {}
        self.predicted: set[str] = set()

    def line(self, name: str, batch: int, status: str, peak: int | None) -> None:
        self.notify(f"{name} batch {batch}: {status} (peak {format_size(peak) if peak else '-'})")

    def on_result(self, p: PlannedTrial, r: TrialResult) -> None:
        self.line(p.trial.model, p.trial.batch_size, r.status, r.memory.peak_bytes)
        self.measured.setdefault(p.trial.model, []).append(r)
        if p.trial.model not in self.predicted:
            line = prediction_line(p.trial.model, self.sizes, self.measured[p.trial.model], self.budget)
            if line:
                self.predicted.add(p.trial.model)
                self.notify(line)

    def skip(self, p: PlannedTrial, known: Mapping[str, TrialResult]) -> str | None:
        from edgebench.agents.python.feasibility import blocked_by

        trial = p.trial
        smaller = [known.get(self.by_cell[(trial.model, b)]) for b in sorted(self.sizes) if b < trial.batch_size]
        reason = blocked_by(trial, smaller)
        if reason is not None:
            self.line(trial.model, trial.batch_size, "skipped", None)
        return reason

    def result_in(self, run: PlanRun) -> Callable[[str, int], TrialResult | None]:
        """Each cell's result in the plan's run (None: skipped, or not run before an interrupt)."""
        return lambda name, batch: run.results.get(self.by_cell[(name, batch)])


def prediction_line(model: str, sizes: tuple[int, ...], results: list[TrialResult], budget: int) -> str | None:
    """The prediction for ``model``'s larger batch sizes, once two of its trials measured memory by category."""
    from edgebench.measure.memory_growth import fit_growth

    growth = fit_growth([r.memory.by_category for r in results if r.ok and r.memory.by_category is not None])
    if growth is None or not budget:
        return None
    larger = [b for b in sizes if b > growth.large_batch]
    if not larger:
        return None
    over = [b for b in larger if growth.predicted_peak_bytes(b) > budget]
    verdict = f"will not fit from b={over[0]}" if over else "all fit"
    sizes_text = ",".join(map(str, larger))
    return f"{model}: prediction ({growth.basis()}): of b={sizes_text} {verdict} in {format_size(budget)}"


def _warn_if_device_is_smaller(budget_bytes: int, sysfs: SysFS, notify: Notify) -> None:
    from edgebench.agents.python.budget import available_memory_bytes

    available = available_memory_bytes(sysfs)
    if available is not None and budget_bytes > available:
        notify(
            f"edgebench: warning: the {format_size(budget_bytes)} budget is more than this host has available "
            f"({format_size(available)}); a trial the kernel kills for memory is recorded as infeasible"
        )
