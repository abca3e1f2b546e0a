"""A stored trial as one :class:`~edgebench.records.finished.FinishedTrial`: the one pair of functions that writes
a finished trial into the store's rows and reads it back, and the parsed view of it that ``layers``, ``trace``,
``partition`` and the report rebuild from.

The store's tables are unchanged: the result row, and the series rows named by the record
(:meth:`FinishedTrial.series`).  Only this module turns rows into the record and back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError
from edgebench.records.events import Event
from edgebench.records.finished import EVENTS, RUN, SAMPLER_META, SAMPLES, SPANS, FinishedTrial
from edgebench.records.result import TrialResult

if TYPE_CHECKING:
    from edgebench.measure.attribution import PowerSeries
    from edgebench.records.spans import SpanTable
    from edgebench.sensors.samples import Samples
    from edgebench.store.sqlite import Store

_SERIES = (EVENTS, SAMPLES, SAMPLER_META, SPANS, RUN)


def save_finished(store: Store, finished: FinishedTrial) -> None:
    """Store the record: its result row and its series rows, in one transaction (see :meth:`Store.save`)."""
    store.save(finished.result, finished.series())


def load_finished(store: Store, trial_id: str) -> FinishedTrial:
    """The stored trial ``trial_id`` (or a unique prefix) as its record; ``KeyError`` if none or ambiguous."""
    return finished_of(store, store.get(trial_id))


def finished_of(store: Store, result: TrialResult) -> FinishedTrial:
    """The record of a result read from ``store`` (its series rows read by name, here and nowhere else)."""
    return FinishedTrial.from_series(result, {name: store.series(result.trial_id, name) for name in _SERIES})


@dataclass(frozen=True)
class StoredTrial:
    """A finished trial with its samples parsed into arrays, for the views that draw or attribute them."""

    finished: FinishedTrial
    samples: Samples | None

    @classmethod
    def of(cls, finished: FinishedTrial) -> StoredTrial:
        from edgebench.sensors.samples import parse_samples  # numpy: only for the views that read samples

        csv = finished.samples_csv
        return cls(finished, parse_samples(csv, finished.sampler_meta) if csv else None)

    @property
    def result(self) -> TrialResult:
        return self.finished.result

    @property
    def events(self) -> list[Event]:
        return self.finished.events

    @property
    def spans(self) -> SpanTable | None:
        return self.finished.spans


def load_trial(store_path: Path | None, trial_id: str) -> StoredTrial:
    """The trial ``trial_id`` (or a unique prefix) with its series; a missing store or trial is a usage error."""
    from edgebench.store.sqlite import Store, default_store_path

    path = store_path or default_store_path()
    if not Path(path).exists():
        raise UsageError("--store", f"{path} does not exist; give the store the trial was recorded in")
    with Store(path, read_only=True) as store:
        try:
            return StoredTrial.of(load_finished(store, trial_id))
        except KeyError as exc:
            raise UsageError("TRIAL", f"{exc.args[0]} in {path}") from None


def power_series(stored: StoredTrial, channel: str | None) -> PowerSeries | None:
    """The power to attribute or draw for a stored trial: ``channel`` (``--power-channel``), else the device total."""
    from edgebench.measure.attribution import power_channel_names, power_from_samples

    if stored.samples is None:
        if channel is not None:
            raise UsageError("--power-channel", f"trial {stored.result.trial_id} was recorded without samples")
        return None
    try:
        return power_from_samples(stored.samples, channel)
    except KeyError:
        names = ", ".join(power_channel_names(stored.samples)) or "none: the device had no power sensor"
        raise UsageError("--power-channel", f"no power channel {channel!r} in this trial (channels: {names})") from None
