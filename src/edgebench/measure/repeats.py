"""Statistics at the level where the variance lives: repeats of a configuration, each a fresh worker process.

The steps of one process are not independent measurements of a configuration: they are autocorrelated and share
that process's offset (its memory layout, its clock, its neighbours), so a test over the steps of one process per
side calls almost any two processes different (eight A/A pairs of one LeNet configuration here: five called
different at p < 0.05).  Kalibera and Jones ("Rigorous benchmarking in reasonable time", ISMM 2013) treat
iterations within executions as the levels of a random-effects design; pyperf and Google Benchmark compare values
gathered across processes.  Here:

- **a repeat's value** is one number per repeat (:func:`repeat_value`: its median step time), so what varies from
  process to process is what the decision sees;
- **a configuration's interval** (:func:`configuration_interval`) is the Student t interval over its repeats'
  values.  It is the balanced one-way random-effects model's interval of the grand mean: the variance of the mean
  of k repeats of n steps is (s²_between + s²_within / n) / k, and the spread of the repeats' values estimates
  exactly that sum, whatever the steps' autocorrelation.  Each repeat keeps its own step-level interval beside it;
- **a difference** (:func:`compare_repeats`) is Welch's t test on the logarithm of the repeats' values (see its
  docstring for why this test), and its interval is the ratio's;
- **a best pick** (:func:`best_of`) is clear only where the best's interval does not overlap any other's;
- **how many repeats** (:func:`repeats_needed`) follows from the between-repeat spread, as Kalibera and Jones size
  each level from its own variance.

None of this imports at ``run``: ``scipy.stats`` costs a second or more to import and is loaded by the functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from edgebench.measure.trust import inconclusive, left_out_note, split_disturbed
from edgebench.records.result import TrialResult
from edgebench.records.trial import configuration_key

LEVEL = 0.95
ALPHA = 0.05
#: The test every repeat-level decision is taken with, as the output names it.
TEST = "Welch's t on log repeat medians"
#: ``repeats: auto`` stops once the configuration's 95% interval is within this share of its value ...
AUTO_TARGET_PCT = 5.0
#: ... or at this many repeats.
AUTO_MAX = 20
#: What one repeat per side cannot tell, wherever a comparison meets it.
ONE_PROCESS = (
    "one process per side cannot separate the difference from run-to-run variance (each process has its own "
    "offset); run both with --repeats 5 or more"
)


@dataclass(frozen=True)
class Interval:
    """An estimate with its 95% bounds, the units it rests on (``n``) and the method that gave it."""

    estimate: float
    low: float
    high: float
    n: int
    method: str

    def overlaps(self, other: Interval) -> bool:
        return self.low <= other.high and other.low <= self.high


def step_median_ms(r: TrialResult) -> float | None:
    """A repeat's value for step times: its median step time (its mean where only the mean was kept)."""
    s = r.latency.step_ms
    if s is None:
        return None
    return s.median if s.median is not None else s.mean


def repeat_value(r: TrialResult, get: Callable[[TrialResult], float | None] = step_median_ms) -> float | None:
    """One number for one repeat (``get`` of it), None where the trial failed or lacks the figure."""
    if not r.ok:
        return None
    value = get(r)
    return float(value) if value is not None and math.isfinite(value) else None


def group_key(r: TrialResult) -> tuple[str | None, str]:
    """The repeat group a result belongs to: its sweep (None for a trial run alone) and its configuration's key."""
    key = r.repeat.config_key if r.repeat is not None else configuration_key(r.trial)
    return (r.sweep.sweep_id if r.sweep is not None else None, key)


def by_configuration(results: Iterable[TrialResult]) -> dict[str, list[TrialResult]]:
    """Results by configuration key, in the order each configuration first appears (repeats in index order)."""
    out: dict[str, list[TrialResult]] = {}
    for r in results:
        out.setdefault(group_key(r)[1], []).append(r)
    for rs in out.values():
        rs.sort(key=lambda r: r.repeat.index if r.repeat is not None else 0)
    return out


def configuration_interval(values: Sequence[float], level: float = LEVEL) -> Interval | None:
    """The mean of the repeats' values with its Student t interval (k - 1 degrees of freedom); None for fewer than
    two repeats, which cannot say how far another process would land."""
    from scipy import stats

    x = [v for v in values if v is not None and math.isfinite(v)]
    if len(x) < 2:
        return None
    mean = sum(x) / len(x)
    sem = stats.sem(x)
    if sem == 0:
        return Interval(mean, mean, mean, len(x), f"{len(x)} repeats, no spread between them")
    low, high = stats.t.interval(level, len(x) - 1, loc=mean, scale=sem)
    return Interval(mean, float(low), float(high), len(x), f"t interval over {len(x)} repeats")


def spread_pct(values: Sequence[float]) -> float | None:
    """The repeats' coefficient of variation in percent (the between-process spread), None for fewer than two."""
    x = [v for v in values if v is not None]
    if len(x) < 2:
        return None
    mean = sum(x) / len(x)
    sd = math.sqrt(sum((v - mean) ** 2 for v in x) / (len(x) - 1))
    return 100 * sd / mean if mean else None


def repeats_needed(values: Sequence[float], target_pct: float = AUTO_TARGET_PCT, most: int = AUTO_MAX) -> int:
    """The fewest repeats whose 95% t interval of the mean is within ``target_pct`` of it, at the spread the
    repeats so far show (Kalibera and Jones: size a level from its own variance), capped at ``most``; with fewer
    than two values the spread is unknown, and two are needed before anything can be said."""
    from scipy import stats

    cv = spread_pct(values)
    if cv is None:
        return 2
    for n in range(2, most + 1):
        if stats.t.ppf(0.5 + LEVEL / 2, n - 1) * cv / math.sqrt(n) <= target_pct:
            return n
    return most


Direction = Literal["faster", "slower"]


@dataclass(frozen=True)
class Difference:
    """B against A at the repeat level: the ratio B/A of the repeats' values (geometric means), its interval, the
    test and its p-value, and the answer in words.  ``p_value`` is None where no test can be made (one repeat on a
    side, disturbed trials): then ``answer`` says why, and no significance is claimed."""

    ratio: float | None
    low: float | None = None
    high: float | None = None
    p_value: float | None = None
    n_a: int = 0
    n_b: int = 0
    test: str | None = None
    #: ``faster`` / ``slower`` (B against A) where the test separates them; None otherwise.
    direction: Direction | None = None
    answer: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def significant(self) -> bool | None:
        return None if self.p_value is None else self.p_value < ALPHA


def compare_repeats(a: Sequence[float], b: Sequence[float], *, lower_is_better: bool = True) -> Difference:
    """Whether B's repeats differ from A's: Welch's t test on the logarithm of each repeat's value.

    Why this test: each repeat's value (its median step time) is one independent draw of the configuration, so the
    repeats, not the steps, are the sample; on the log scale a process's offset, which is multiplicative, is
    additive and nearly symmetric; Welch's t needs no equal spread of the two sides and works from two repeats per
    side, and its interval of the difference of log means is the interval of the ratio B/A, so the p-value and the
    interval always agree (p < 0.05 exactly when the interval leaves out 1).  Google Benchmark's Mann-Whitney U test
    makes no assumption of shape but cannot reach p < 0.05 with three repeats per side (its smallest p-value there
    is 0.1) and gives no interval of the ratio.  ``benchmarks/aa_calibration.py`` measures how often this test calls
    two samples of one configuration different (at most 5% is the aim) and the smallest difference it finds.
    """
    from scipy import stats

    xa = [v for v in a if v is not None and v > 0]
    xb = [v for v in b if v is not None and v > 0]
    if not xa or not xb:
        return Difference(None, n_a=len(xa), n_b=len(xb), answer="no repeat to compare on a side")
    la, lb = [math.log(v) for v in xa], [math.log(v) for v in xb]
    ratio = math.exp(sum(lb) / len(lb) - sum(la) / len(la))
    if min(len(xa), len(xb)) < 2:
        return Difference(ratio, n_a=len(xa), n_b=len(xb), answer=f"B/A {ratio:.3f}: {ONE_PROCESS}")
    spread = max(la) - min(la) + max(lb) - min(lb)
    if spread == 0:  # no process-to-process spread at all (values imported as one number each): exact
        direction = None if ratio == 1 else _direction(ratio, lower_is_better)
        answer = "no difference (no spread)" if direction is None else f"{_factor(ratio)} {direction} (no spread)"
        return Difference(ratio, ratio, ratio, None, len(xa), len(xb), TEST, direction, answer)
    found = stats.ttest_ind(lb, la, equal_var=False)
    ci = found.confidence_interval(LEVEL)
    low, high, p = math.exp(ci.low), math.exp(ci.high), float(found.pvalue)
    counts = f"{len(xa)} vs {len(xb)} repeats"
    if p < ALPHA:
        direction = _direction(ratio, lower_is_better)
        answer = f"{_factor(ratio)} {direction} [{low:.3f}, {high:.3f}] ({TEST}, {counts}, p={p:.2g})"
    else:
        direction = None
        answer = f"no clear difference: B/A {ratio:.3f} [{low:.3f}, {high:.3f}] ({TEST}, {counts}, p={p:.2g})"
    return Difference(ratio, low, high, p, len(xa), len(xb), TEST, direction, answer)


def _direction(ratio: float, lower_is_better: bool) -> Direction:
    return "slower" if (ratio > 1) == lower_is_better else "faster"


def _factor(ratio: float) -> str:
    return f"{ratio if ratio >= 1 else 1 / ratio:.2f}x"


def compare_results(
    a: Sequence[TrialResult],
    b: Sequence[TrialResult],
    get: Callable[[TrialResult], float | None] = step_median_ms,
    *,
    lower_is_better: bool = True,
) -> Difference:
    """:func:`compare_repeats` over two sides' trials, each a repeat: failed trials do not count, disturbed ones
    (:func:`~edgebench.measure.trust.disturbances`) are left out with a note, and where that leaves a side with
    none, or with one where it had several, the answer is ``inconclusive: k of n trials disturbed (why)``."""
    ok_a, ok_b = [r for r in a if r.ok], [r for r in b if r.ok]
    use_a, out_a = split_disturbed(ok_a)
    use_b, out_b = split_disturbed(ok_b)
    out, total = [*out_a, *out_b], len(ok_a) + len(ok_b)
    too_few = any(not use or (len(use) < 2 <= len(ok)) for use, ok in ((use_a, ok_a), (use_b, ok_b)))
    if out and too_few:
        va, vb = _values(ok_a, get), _values(ok_b, get)
        ratio = compare_repeats(va, vb).ratio if va and vb else None
        return Difference(ratio, n_a=len(va), n_b=len(vb), answer=inconclusive(out, total))
    found = compare_repeats(_values(use_a, get), _values(use_b, get), lower_is_better=lower_is_better)
    note = left_out_note(out, total)
    return found if note is None else Difference(**{**found.__dict__, "notes": [*found.notes, note]})


def _values(results: Sequence[TrialResult], get: Callable[[TrialResult], float | None]) -> list[float]:
    return [v for r in results if (v := repeat_value(r, get)) is not None]


@dataclass(frozen=True)
class Best:
    """The best of several candidates at the repeat level: ``label`` is the lowest (highest) mean; ``clear`` when
    its interval overlaps no other's; ``answer`` in words (``no clear best: A and B overlap``)."""

    label: str | None
    clear: bool
    answer: str
    intervals: dict[str, Interval | None] = field(default_factory=dict)


def best_of(candidates: dict[str, Sequence[float]], *, lower_is_better: bool = True, what: str = "") -> Best:
    """The candidate with the best mean of its repeats' values, and whether it is clearly best: its t interval
    overlaps no other candidate's.  One repeat of any candidate has no interval, so no best is clear: the answer
    names the lowest (highest) and says so.  ``what`` names the figure in the answer."""
    means = {k: sum(v) / len(v) for k, v in candidates.items() if v}
    if not means:
        return Best(None, False, f"no {what or 'figure'} to rank")
    pick = (min if lower_is_better else max)(means, key=lambda k: means[k])
    if len(means) == 1:
        return Best(pick, False, f"{pick}: the only one measured")
    intervals = {k: configuration_interval(candidates[k]) for k in means}
    word = "lowest" if lower_is_better else "highest"
    mine = intervals[pick]
    if mine is None or any(intervals[k] is None for k in means):
        few = min(len(candidates[k]) for k in means)
        return Best(pick, False, f"{word} {what}: {pick}, but {few} repeat each cannot tell it clearly best "
                                 "(--repeats 3 or more)".replace("  ", " "), intervals)  # fmt: skip
    overlapping = [k for k in means if k != pick and mine.overlaps(intervals[k])]  # type: ignore[arg-type]
    if overlapping:
        return Best(pick, False, f"no clear best: {', '.join([pick, *overlapping])} overlap", intervals)
    return Best(pick, True, f"best: {pick}", intervals)


@dataclass(frozen=True)
class ConfigurationSummary:
    """A configuration's repeats and what they say together: each repeat's value, the configuration's interval
    over them, the spread between them (process to process) beside the spread within them (step to step), and
    which repeats were left out as disturbed."""

    config_key: str
    #: Every repeat stored, in index order (failed and disturbed ones included).
    results: list[TrialResult]
    #: The value of each repeat that may decide (ok and undisturbed), in index order.
    values: list[float]
    interval: Interval | None
    #: The coefficient of variation of ``values`` (between repeats) and the median of the repeats' own step cv
    #: (within a repeat), in percent.
    between_pct: float | None
    within_pct: float | None
    disturbed: list[TrialResult]

    @property
    def note(self) -> str | None:
        return left_out_note(self.disturbed, sum(1 for r in self.results if r.ok))


def summarize_configuration(
    results: Sequence[TrialResult], get: Callable[[TrialResult], float | None] = step_median_ms
) -> ConfigurationSummary:
    """What a configuration's repeats (the results of one repeat group) say together; see
    :class:`ConfigurationSummary`."""
    ordered = sorted(results, key=lambda r: r.repeat.index if r.repeat is not None else 0)
    usable, disturbed = split_disturbed([r for r in ordered if r.ok])
    values = _values(usable, get)
    cvs = sorted(100 * r.latency.step_ms.cv for r in usable if r.latency.step_ms and r.latency.step_ms.cv is not None)
    within = cvs[len(cvs) // 2] if cvs else None
    key = group_key(ordered[0])[1] if ordered else ""
    return ConfigurationSummary(key, ordered, values, configuration_interval(values), spread_pct(values), within,
                                disturbed)  # fmt: skip


def grouped(results: Iterable[TrialResult]) -> list[TrialResult]:
    """``results`` with each repeat group's repeats together, in index order, the groups in the order their first
    repeat appears (an interleaved run stores them mixed); trials outside ``--repeats`` keep their place."""
    order: dict[tuple[str | None, str] | str, list[TrialResult]] = {}
    for r in results:
        key = group_key(r) if r.repeat is not None else r.trial_id
        order.setdefault(key, []).append(r)
    out = []
    for members in order.values():
        out += sorted(members, key=lambda r: r.repeat.index if r.repeat is not None else 0)
    return out


def repeat_label(r: TrialResult) -> str | None:
    """``2/5``: which repeat of how many planned, None for a trial outside ``--repeats``."""
    return f"{r.repeat.index + 1}/{r.repeat.planned}" if r.repeat is not None else None
