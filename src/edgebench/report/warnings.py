"""The one warning line of a trial whose steps were unstable or whose device was busy, as every table prints it."""

from __future__ import annotations

from collections.abc import Iterable

from edgebench.records.result import TrialResult


def warning_text(r: TrialResult) -> str | None:
    """What is wrong with the trial's figures, as one line: its hygiene warning (``device busy: ...; unstable
    steps ...``) and, for a trial whose sensors were a copied tree, that they were constant; None where nothing is."""
    from edgebench.measure.trust import replayed_reason

    parts = [r.hygiene.warning] if r.hygiene is not None and r.hygiene.warning else []
    if r.device.replayed:
        parts.append(replayed_reason(r))
    return "; ".join(parts) or None


def hygiene_warning(r: TrialResult) -> str | None:
    """``trial ID: device busy: ...; unstable steps ...`` or None for a trial that passed (or predates) the checks."""
    text = warning_text(r)
    return None if text is None else f"trial {r.trial_id}: {text}"


def hygiene_warnings(results: Iterable[TrialResult]) -> list[str]:
    """``warning: ...`` lines, one per flagged trial, to print under a table of ``results``."""
    return [f"warning: {line}" for r in results if (line := hygiene_warning(r)) is not None]
