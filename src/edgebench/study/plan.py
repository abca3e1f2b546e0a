"""A study's experiment matrix scaled to the device and to a time budget.

Each study names the trials its observations need (models, batch sizes, core sets, precisions, repeats); this module
leaves out what the device cannot run (a model whose training state alone would not fit its memory, a core set it
does not have) and then trims the matrix to the budget by a rough cost estimate, the cheapest trials kept.
What was left out is said in the plan's notes,
so a "cannot be checked here" can be traced to it.

The estimate: a worker start of :data:`START_S` seconds plus the steps' training FLOPs at :data:`GFLOPS_PER_CORE`
per usable core.  It only orders and trims the plan; no figure of the report comes from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from edgebench.study.device import DeviceFacts

START_S = 4.0
MIN_TIMEOUT_S = 120.0
GFLOPS_PER_CORE = 1.5
#: Bytes per parameter a training step holds at least (weights, gradients, momentum, a copy in flight).
TRAIN_BYTES_PER_PARAM = 16
#: A model is left out when its parameters' training state would take more than this share of available memory.
MEMORY_SHARE = 0.5


@dataclass
class StudyPlan:
    #: Each planned trial's values (the command adds its flags' and builds the Trials, so errors name the flags).
    trials: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    estimate_s: float = 0.0


@dataclass(frozen=True)
class Cell:
    """One planned trial before it is built: its values and a cost estimate."""

    values: dict[str, Any]
    cost_s: float

    @property
    def model(self) -> str:
        return str(self.values["model"])

    def trial_values(self, common: dict[str, Any]) -> dict[str, Any]:
        """The trial's values with ``common`` and a timeout of ten times its estimate (two minutes at least), so one
        trial that hangs costs minutes of the budget, not the default half hour."""
        return {"timeout_s": max(MIN_TIMEOUT_S, 10 * self.cost_s), **common, **self.values}


def model_counts(model: str) -> tuple[int | None, int | None]:
    """``(params, training FLOPs per sample)`` of a zoo model at its default input, from the count cache."""
    from edgebench.graph.counts import CountCache, ModelCounter
    from edgebench.workloads import get_workload

    counter = ModelCounter(counts=CountCache())
    counts = counter.count(get_workload(model))
    counter.save()
    return counts.params, counts.train_flops_per_sample


def cost_s(facts: DeviceFacts, flops_per_sample: int | None, batch: int, steps: int) -> float:
    if not flops_per_sample:
        return START_S
    rate = GFLOPS_PER_CORE * 1e9 * max(1, len(facts.allowed))
    return START_S + steps * batch * flops_per_sample / rate


def fits_memory(facts: DeviceFacts, params: int | None) -> bool:
    if params is None or facts.memory_available_bytes is None:
        return True
    return params * TRAIN_BYTES_PER_PARAM <= MEMORY_SHARE * facts.memory_available_bytes


def trim(
    cells: Sequence[Cell], budget_s: float | None, notes: list[str], *, fit_points: int = 1, reserved_s: float = 0.0
) -> list[Cell]:
    """The cells within ``budget_s`` less ``reserved_s`` (kept for a trial of fixed length; None: all), the dearest
    dropped first; then a model left with fewer than ``fit_points`` cells over two batch sizes is dropped whole (its
    fits need them; its budget stays unspent)."""
    kept = list(cells)
    if budget_s is None:
        return kept
    dropped = 0
    while kept and sum(c.cost_s for c in kept) > budget_s - reserved_s:
        kept.remove(max(kept, key=lambda c: c.cost_s))
        dropped += 1
    if dropped:
        notes.append(f"{dropped} planned trials left out to stay within the {budget_s / 60:g} min budget "
                     "(the dearest first; --budget raises it)")  # fmt: skip
    short = sorted({c.model for c in kept} - {m for m in {c.model for c in kept} if _fits(kept, m, fit_points)})
    if short and fit_points > 1:
        kept = [c for c in kept if c.model not in short]
        notes.append(f"{', '.join(short)} left out: the budget leaves fewer than {fit_points} of their trials over "
                     "two batch sizes")  # fmt: skip
    return kept


def _fits(cells: Sequence[Cell], model: str, points: int) -> bool:
    mine = [c for c in cells if c.model == model]
    return len(mine) >= points and len({c.values.get("batch_size") for c in mine}) >= 2
