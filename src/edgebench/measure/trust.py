"""Whether a trial may feed a decision: the one question every verdict, best pick, saving and prediction asks.

A figure that is shown may carry a warning; a figure that is *decided on* must not rest silently on a trial whose
checks failed.  The reasons come from what the result already carries (its hygiene checks,
:mod:`edgebench.measure.hygiene`, and where its sensors came from), so a table that shows a trial and a decision
that leaves it out say the same thing.
"""

from __future__ import annotations

from edgebench.records.result import TrialResult

#: Parts of the hygiene warning about the steps' spread alone: a wide spread widens an interval, which the
#: statistics already carry; it does not make the trial's figures someone else's.
_SPREAD_ONLY = ("unstable steps",)
#: How a replayed trial's reason begins wherever it is shown.
REPLAYED = "replayed tree: sensors constant"


def disturbances(result: TrialResult) -> tuple[str, ...]:
    """Why this trial must not silently feed a verdict, a best pick, a saving or a prediction: one short reason per
    failed check (device busy ..., steps in two modes ..., throttling ..., clock moved ..., window too short ...,
    replayed tree: sensors constant ...); empty when the trial may be used."""
    reasons: list[str] = []
    warning = result.hygiene.warning if result.hygiene is not None else None
    for part in (warning or "").split("; "):
        if part and not part.startswith(_SPREAD_ONLY):
            reasons.append(part)
    if result.device.replayed:
        reasons.append(replayed_reason(result))
    return tuple(reasons)


def replayed_reason(result: TrialResult) -> str:
    """The reason a replayed trial carries: its sensors were another device's copied files, which never change."""
    return f"{REPLAYED} (read from the copied tree {result.device.tree}, not measured on {result.device.hostname})"
