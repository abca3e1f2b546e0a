"""Whether a trial may feed a decision: the one question every verdict, best pick, saving and prediction asks.

A trial whose hygiene check failed (:mod:`edgebench.measure.hygiene`: the device was busy, the steps fell into two
modes, the clock moved, the device throttled) measured something besides its own work.  Its figures are still
shown, with their warning; what it must not do is decide anything silently.  Every decision point asks
:func:`disturbances` and either leaves such a trial out with a note (:func:`left_out_note`) or, where too little is
left, answers :func:`inconclusive`.  The tables that show a trial print the same reasons (its hygiene warning), so a
figure shown and a figure decided on carry the same warning.

"Unstable steps" (a coefficient of variation over 10%) is a warning, not a disturbance: a decision made at the repeat
level already carries the run-to-run variance, and a noisy configuration is a finding, not a fault.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from edgebench.measure.hygiene import BUSY_OTHER_PCT
from edgebench.records.result import TrialResult
from edgebench.sensors.android_thermal import THROTTLING_STATUS, status_name


def disturbances(result: TrialResult) -> tuple[str, ...]:
    """Why this trial must not silently feed a verdict, a best pick, a saving or a prediction: one short reason per
    failed check (device busy ..., steps in two modes ..., throttling ..., clock moved ...); empty when the trial
    may be used (it passed every check, or it predates them: ``hygiene`` None)."""
    h = result.hygiene
    if h is None:
        return ()
    reasons = []
    if h.other_cpu_pct is not None and h.other_cpu_pct > BUSY_OTHER_PCT:
        reasons.append(f"device busy (other processes used {h.other_cpu_pct:.0f}% of its cores)")
    if h.step_modes_ms:
        low, high = h.step_modes_ms
        reasons.append(f"steps in two modes ({low:.3g} and {high:.3g} ms)")
    hot = [s for s in (h.thermal_status_start, h.thermal_status_end) if s is not None and s >= THROTTLING_STATUS]
    if hot:
        reasons.append(f"throttling (thermal status {max(hot)}, {status_name(max(hot))})")
    over = [z for z in (h.zone_trip_start, h.zone_trip_end) if z is not None and z.temp_c >= z.passive_trip_c]
    if over:
        z = max(over, key=lambda z: z.temp_c - z.passive_trip_c)
        reasons.append(f"throttling ({z.zone} at {z.temp_c:.1f} °C, trip {z.passive_trip_c:.1f} °C)")
    if h.clock_moved and h.clock_range_khz:
        low, high = h.clock_range_khz
        reasons.append(f"clock moved ({low / 1e3:.0f}-{high / 1e3:.0f} MHz)")
    return tuple(reasons)


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
            kind = reason.split(" (", 1)[0]
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
