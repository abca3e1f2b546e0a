"""Comparing two things stored: two trials measurement by measurement, or two sweeps, devices or hosts
configuration by configuration (paired on the fields that define the work), each with the ratio B/A and a decision
taken at the repeat level (:mod:`edgebench.measure.repeats`), with the settings A and B differ in and each side's
warnings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.report.compare import GroupComparison, Row, Side

#: The fields a ``match`` may pair trials on.
MATCHABLE = ("model", "batch_size", "threads", "mask", "cores", "freq_khz", "precision", "backend", "device")


@dataclass(frozen=True)
class Comparison:
    """The two sides as resolved (trial, sweep or device), and either the measurement rows of two trials (with how
    they differ in what they ran, and the warning that marks an unlike pair) or the paired configurations of two
    groups (``groups``)."""

    a: Side
    b: Side
    rows: list[Row]
    unlike: list[str]
    warning: str | None
    groups: GroupComparison | None

    @property
    def differences(self) -> list[str]:
        """Every setting in which A and B differ (``cores: 0 (mask 1) vs 1 (mask 2)``)."""
        from edgebench.report.compare import setting_differences

        if self.groups is not None:
            return self.groups.differences
        return setting_differences([self.a.results[0].trial], [self.b.results[0].trial])


def compare_stored(
    a: str, b: str, *, match: str | Sequence[str] | None = None, store: Path | None = None
) -> Comparison:
    """Resolve ``a`` and ``b`` (a sweep id, a trial id or unique prefix, or a hostname) and compare them; groups are
    paired on ``match`` (default: every field that defines the work, the device's left out for two devices)."""
    from edgebench.report.compare import compare_groups, compare_trials, resolve, unlike, unlike_warning
    from edgebench.workflows.common import read_store
    from edgebench.workflows.exchange import NO_STORE_YET

    with read_store(store, NO_STORE_YET) as db:
        side_a, side_b = resolve(db, a), resolve(db, b)
        for side in (side_a, side_b):
            if not side.results:
                raise UsageError(side.ref, f"{side.title} has no successful trial to compare")
        if side_a.kind == side_b.kind == "trial":
            ra, rb = side_a.results[0], side_b.results[0]
            return Comparison(side_a, side_b, compare_trials(ra, rb), unlike(ra, rb), unlike_warning(ra, rb), None)
        fields = match_fields(match, device=side_a.kind == side_b.kind == "device")
        groups = compare_groups(side_a, side_b, fields)
    return Comparison(side_a, side_b, groups.rows, [], None, groups)


def match_fields(match: str | Sequence[str] | None, *, device: bool) -> tuple[str, ...]:
    """The fields that pair trials: ``model,batch_size`` (text or names), or the default for two groups."""
    from edgebench.report.compare import DEVICE_MATCH_FIELDS, MATCH_FIELDS

    if match is None:
        return DEVICE_MATCH_FIELDS if device else MATCH_FIELDS
    listed = match.split(",") if isinstance(match, str) else list(match)
    fields = tuple(f.strip() for f in listed if f.strip())
    unknown = [f for f in fields if f not in MATCHABLE]
    if unknown or not fields:
        raise UsageError(
            "--match", f"{', '.join(unknown) or match!r} is not a field; choose from {', '.join(MATCHABLE)}"
        )
    return fields
