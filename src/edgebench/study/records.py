"""The study's typed records: an observation as the paper words it, the evidence for or against it, the verdict.

They are what ``study --json`` prints and what the HTML report draws, so every figure in them says what it is: the
quantity and its unit, the interval and the test that gave it, the trials it came from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import ConfigDict, Field

from edgebench.records.model import Record

#: What a check can conclude.  ``inconclusive``: the interval straddles the threshold, so the data support neither
#: answer; ``cannot be checked here``: the device or the trials lack what the observation needs (the reason says what).
Outcome = Literal["holds", "does not hold", "inconclusive", "cannot be checked here"]
#: How an interval is compared with its threshold: the quantity is above it, below it, or within +/- it.
Direction = Literal["above", "below", "within"]

#: What an observation can need of a device, in the words a reason uses.
NEEDS = {
    "gpu": "a GPU with a utilization sensor",
    "cuda": "a GPU the framework can run on (torch with CUDA)",
    "power": "a power sensor",
    "rails": "per-component power rails (GPU and memory)",
    "cores": "two or more cores",
    "clusters": "two core types (big and little clusters)",
    "cpufreq": "CPU frequency control (cpufreq with a frequency table, as root)",
    "thermal": "a temperature sensor and CPU clocks",
    "accuracy": "accuracy evaluated during training",
    "int8": "int8 quantized inference",
    "models": "two or more models",
    "lstm": "an LSTM model beside a CNN",
    "traced": "a layer-traced trial (per-layer costs)",
    "utilization": "CPU utilization counters that advance during a trial (/proc/stat)",
}
#: What a replayed device tree (``--sysfs-root``) supplies from its copied files, constant while a trial runs: an
#: observation needing any of these is never decided from replayed trials (``study.decide.replayed``).
FROM_THE_TREE = frozenset({"gpu", "power", "rails", "thermal", "cpufreq", "clusters", "utilization"})


class Observation(Record):
    """One finding of a source study, as published."""

    model_config = ConfigDict(frozen=True)

    study: str
    #: ``O1``... in the paper's own numbering.
    id: str
    #: A few words naming it in the table.
    title: str
    #: The paper's words (abridged where long).
    words: str
    #: The published figure or table it rests on, and the value or finding there.
    figure: str
    published: str
    #: Keys of :data:`NEEDS`.
    needs: tuple[str, ...] = ()


def observation_of(study: str) -> Callable[..., Observation]:
    """``_obs(id, title, words, figure, published, *needs)``: a study's observations written as its table reads."""

    def make(id: str, title: str, words: str, figure: str, published: str, *needs: str) -> Observation:
        return Observation(study=study, id=id, title=title, words=words, figure=figure, published=published,
                           needs=needs)  # fmt: skip

    return make


class Evidence(Record):
    """One interval estimate and how it compares with the observation's threshold."""

    model_config = ConfigDict(frozen=True)

    #: What is estimated, with its unit (``exponent of energy per step against batch size``).
    quantity: str
    estimate: float
    ci_low: float
    ci_high: float
    level: float = 0.95
    #: The statistical test or interval method (``OLS slope, t interval``...).
    test: str
    #: Independent units the interval rests on (trials, steps, series).
    n: int
    threshold: float
    direction: Direction
    outcome: Literal["holds", "does not hold", "inconclusive"]
    trial_ids: list[str]
    #: Always ``measured``: an estimate or a prediction never becomes evidence.
    kind: Literal["measured"] = "measured"
    #: False for an interval shown beside the verdict that does not decide it.
    decides: bool = True
    note: str | None = None


class Verdict(Record):
    """An observation, what the user's trials say of it, and why."""

    model_config = ConfigDict(frozen=True)

    observation: Observation
    outcome: Outcome
    #: One sentence: why it holds or not, why it cannot be checked (the missing sensor or trials), what straddles.
    reason: str
    evidence: list[Evidence] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class StudyReport(Record):
    """A study's verdicts over the trials of one run of its plan (``study --json`` prints this)."""

    model_config = ConfigDict(frozen=True)

    study: str
    title: str
    source: str
    sweep_id: str | None
    store: str | None
    device: str
    trials: int
    trials_ok: int
    verdicts: list[Verdict]
    notes: list[str] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.verdicts:
            out[v.outcome] = out.get(v.outcome, 0) + 1
        return out
