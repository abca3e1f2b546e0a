"""Whether a trial may feed a decision: the one question every verdict, best pick, saving and prediction asks.

A trial whose hygiene check failed (:mod:`edgebench.measure.hygiene`: the device was busy, the steps fell into two
modes, the clock moved, the device throttled, the window was too short to judge) measured something besides its own
work. Its figures are still shown, with their warning; what it must not do is decide anything silently. Every decision
point asks :func:`disturbances` and either leaves such a trial out with a note (:func:`left_out_note`) or, where too
little is left, answers :func:`inconclusive`. The tables that show a trial print the same reasons (its hygiene warning),
so a figure shown and a figure decided on carry the same warning.

"Unstable steps" (a coefficient of variation over 10%) is a warning, not a disturbance: a decision made at the repeat
level already carries the run-to-run variance, and a noisy configuration is a finding, not a fault.  A trial
read from a copied sysfs tree (``--sysfs-root``) is replayed: its sensors never change, so every decision that needs
a signal to vary says so (:func:`replayed_reason`), while its step times, measured here, still count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from edgebench.measure.hygiene import warning_line
from edgebench.records.result import TrialResult

#: Parts of the hygiene warning about the steps' spread alone: a wide spread widens an interval, which the
#: statistics already carry; it does not make the trial's figures someone else's.
_SPREAD_ONLY = ("unstable steps",)
#: How a replayed trial's reason begins wherever it is shown.
REPLAYED = "replayed tree: sensors constant"


def disturbances(result: TrialResult) -> tuple[str, ...]:
    """Why this trial must not silently feed a verdict, a best pick, a saving or a prediction: one short reason per
    failed check (device busy ..., steps in two modes ..., throttling ..., clock moved ..., window too short ...);
    empty when the trial may be used (it passed every check, or it predates them: ``hygiene`` None).

    A replayed trial is not disturbed here: its steps were measured on this host like any other.  What it cannot
    give is a sensor that varies, which the decisions that need one ask of :func:`replayed_reason` themselves (a
    study's GPU, rail and power observations; a device's identity in ``predict``, ``partition`` and Table 4)."""
    h = result.hygiene
    if h is None:
        return ()
    warning = h.warning if h.warning is not None else warning_line(h, result.trial.cores or (), result.trial.threads)
    return tuple(part for part in (warning or "").split("; ") if part and not part.startswith(_SPREAD_ONLY))


def replayed_reason(result: TrialResult) -> str:
    """The reason a replayed trial carries: its sensors were another device's copied files, which never change."""
    return f"{REPLAYED} (read from the copied tree {result.device.tree}, not measured on {result.device.hostname})"


#: Where a reason's kind ends and its figures begin ("device busy: ...", "steps in two modes (near ...", "clock moved
#: 1000-1400 MHz"): reasons of one kind are counted together.
_KIND = re.compile(r" \(|: | near | \d")


def split_disturbed(results: Iterable[TrialResult]) -> tuple[list[TrialResult], list[TrialResult]]:
    """``(usable, disturbed)``: the trials that may feed a decision, and those :func:`disturbances` rules out."""
    usable, disturbed = [], []
    for r in results:
        (disturbed if disturbances(r) else usable).append(r)
    return usable, disturbed


def why(disturbed: Sequence[TrialResult]) -> str:
    """The reasons of ``disturbed`` trials in one parenthesis-free phrase, the commonest first (``device busy (...)
    in 3; steps in two modes (...)``), each kind named once with its first figures."""
    counts: dict[str, tuple[int, str]] = {}
    for r in disturbed:
        for reason in disturbances(r):
            kind = _KIND.split(reason, 1)[0]
            n, first = counts.get(kind, (0, reason))
            counts[kind] = (n + 1, first)
    ordered = sorted(counts.items(), key=lambda item: -item[1][0])
    return "; ".join(first + (f" in {n}" if n > 1 else "") for _, (n, first) in ordered)


def inconclusive(disturbed: Sequence[TrialResult], total: int) -> str:
    """The answer of a decision that too few undisturbed trials are left for: ``inconclusive: k of n trials
    disturbed (why)``."""
    return f"inconclusive: {len(disturbed)} of {total} trials disturbed ({why(disturbed)})"


def left_out_note(disturbed: Sequence[TrialResult], total: int) -> str | None:
    """The note of a decision made without its disturbed trials (None when none was left out)."""
    if not disturbed:
        return None
    ids = ", ".join(r.trial_id for r in disturbed[:3]) + (", ..." if len(disturbed) > 3 else "")
    return f"left out {len(disturbed)} of {total} trials as disturbed ({why(disturbed)}): {ids}"
