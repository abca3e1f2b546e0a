"""From intervals to verdicts: one rule for every observation of every study.

An interval wholly on the observation's side of its threshold holds, wholly on the other side does not, and one
that straddles the threshold is inconclusive: the data support neither answer, and the verdict says so rather than
reading the point estimate.  Several intervals combine as the observation's words do: ``all`` (each part must
hold) or ``any`` (for some model).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from edgebench.records.result import TrialResult
from edgebench.study.records import FROM_THE_TREE, NEEDS, Direction, Evidence, Observation, Outcome, Verdict
from edgebench.study.stats import Interval


def compare(low: float, high: float, threshold: float, direction: Direction) -> Literal[
    "holds", "does not hold", "inconclusive"
]:  # fmt: skip
    if direction == "above":
        return "holds" if low > threshold else "does not hold" if high < threshold else "inconclusive"
    if direction == "below":
        return "holds" if high < threshold else "does not hold" if low > threshold else "inconclusive"
    if -threshold < low and high < threshold:
        return "holds"
    return "does not hold" if low > threshold or high < -threshold else "inconclusive"


def evidence(
    quantity: str,
    interval: Interval,
    threshold: float,
    direction: Direction,
    results: Iterable[TrialResult],
    *,
    decides: bool = True,
    note: str | None = None,
) -> Evidence:
    return Evidence(
        quantity=quantity,
        estimate=interval.estimate,
        ci_low=interval.low,
        ci_high=interval.high,
        test=interval.method,
        n=interval.n,
        threshold=threshold,
        direction=direction,
        outcome=compare(interval.low, interval.high, threshold, direction),
        trial_ids=sorted({r.trial_id for r in results}),
        decides=decides,
        note=note,
    )


def combine(parts: Sequence[Evidence], how: Literal["all", "any"] = "all") -> Outcome:
    outcomes = [e.outcome for e in parts if e.decides]
    if not outcomes:
        raise ValueError("no deciding evidence")
    if how == "all":
        if "does not hold" in outcomes:
            return "does not hold"
        return "holds" if all(o == "holds" for o in outcomes) else "inconclusive"
    if "holds" in outcomes:
        return "holds"
    return "does not hold" if all(o == "does not hold" for o in outcomes) else "inconclusive"


def _shown(e: Evidence) -> str:
    side = {"above": ">", "below": "<", "within": "within +/-"}[e.direction]
    return f"{e.quantity} {e.estimate:.3g} [{e.ci_low:.3g}, {e.ci_high:.3g}] ({side} {e.threshold:g}: {e.outcome})"


def verdict(
    observation: Observation,
    parts: Sequence[Evidence],
    how: Literal["all", "any"] = "all",
    notes: Sequence[str] = (),
) -> Verdict:
    """The verdict the deciding evidence gives, with a reason naming the interval that decided it."""
    outcome = combine(parts, how)
    deciding = [e for e in parts if e.decides]
    if outcome == "inconclusive":
        key = [e for e in deciding if e.outcome == "inconclusive"]
        reason = "the interval straddles the threshold: " + "; ".join(_shown(e) for e in key)
    elif outcome == "does not hold":
        key = [e for e in deciding if e.outcome == "does not hold"][:1] if how == "all" else deciding
        reason = "; ".join(_shown(e) for e in key)
    else:
        key = [e for e in deciding if e.outcome == "holds"] if how == "any" else deciding
        reason = "; ".join(_shown(e) for e in key[:2])
    return Verdict(observation=observation, outcome=outcome, reason=reason, evidence=list(parts), notes=list(notes))


#: Why a comparison of two configurations with one repeat each decides nothing.
ONE_REPEAT = (
    "one repeat per configuration: a ratio of two processes cannot be told from run-to-run variance (each process "
    "has its own offset); run the study with --repeats 2 or more"
)


def too_few_repeats(observation: Observation, notes: Sequence[str] = ()) -> Verdict:
    """Inconclusive: the configurations it compares ran once each (:data:`ONE_REPEAT`)."""
    return Verdict(observation=observation, outcome="inconclusive", reason=f"inconclusive: {ONE_REPEAT}",
                   notes=list(notes))  # fmt: skip


def cannot(observation: Observation, reason: str, notes: Sequence[str] = ()) -> Verdict:
    return Verdict(observation=observation, outcome="cannot be checked here", reason=reason, notes=list(notes))


def lacks(observation: Observation, need: str, detail: str = "") -> Verdict:
    """Cannot be checked: the device lacks ``need`` (a key of :data:`NEEDS`); ``detail`` says what was seen."""
    return cannot(observation, f"needs {NEEDS[need]}" + (f": {detail}" if detail else ""))


def replayed(verdict: Verdict, results: Sequence[TrialResult]) -> Verdict:
    """A verdict on what a device's files say (a GPU's load, rails, power, temperature, clocks, the cores'
    counters) that rests on trials read through a copied tree (``--sysfs-root``) is no verdict: the tree's files
    never change, so a quantity that must vary reads as a constant.  It becomes "cannot be checked here" with the
    reason ``replayed tree: sensors constant``, and the intervals computed from the constants are not shown."""
    from edgebench.measure.trust import REPLAYED

    if not FROM_THE_TREE & set(verdict.observation.needs):
        return verdict
    used = {i for e in verdict.evidence for i in e.trial_ids}
    rested_on = [r for r in results if r.trial_id in used] if used else list(results)
    copies = [r for r in rested_on if r.device.replayed]
    if not copies or (not used and len(copies) < len(rested_on)):
        return verdict
    trees = sorted({r.device.tree or "?" for r in copies})
    needs = ", ".join(NEEDS[n] for n in verdict.observation.needs if n in FROM_THE_TREE)
    reason = (
        f"{REPLAYED}: {len(copies)} of {len(rested_on)} trials read the copied tree {', '.join(trees)}, whose files "
        f"never change while a trial runs here; this observation needs {needs} measured on the device"
    )
    notes = [*verdict.notes]
    if verdict.evidence:
        notes.append(f"not shown: the {verdict.outcome!r} the tree's constant readings would have given")
    return cannot(verdict.observation, reason, notes)
