"""The one warning line of a trial whose steps were unstable or whose device was busy, as every table prints it."""

from __future__ import annotations

from collections.abc import Iterable

from edgebench.records.result import TrialResult


def hygiene_warning(r: TrialResult) -> str | None:
    """``trial ID: device busy: ...; unstable steps ...`` or None for a trial that passed (or predates) the checks."""
    if r.hygiene is None or r.hygiene.warning is None:
        return None
    return f"trial {r.trial_id}: {r.hygiene.warning}"


def hygiene_warnings(results: Iterable[TrialResult]) -> list[str]:
    """``warning: ...`` lines, one per flagged trial, to print under a table of ``results``."""
    return [f"warning: {line}" for r in results if (line := hygiene_warning(r)) is not None]
