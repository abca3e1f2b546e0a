"""Reading a stored trial back for the views that rebuild from its series (``layers``, ``trace``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from edgebench.errors import UsageError
from edgebench.measure.attribution import PowerSeries
from edgebench.records.events import Event, parse_events
from edgebench.records.result import TrialResult
from edgebench.records.sampling import SamplerMeta
from edgebench.records.spans import SpanTable
from edgebench.sensors.samples import Samples, parse_samples


@dataclass(frozen=True)
class StoredTrial:
    result: TrialResult
    events: list[Event]
    samples: Samples | None
    spans: SpanTable | None


def load_trial(store_path: Path | None, trial_id: str) -> StoredTrial:
    """The trial ``trial_id`` (or a unique prefix) with its series; a missing store or trial is a usage error."""
    from edgebench.store import Store, default_store_path

    path = store_path or default_store_path()
    if not Path(path).exists():
        raise UsageError("--store", f"{path} does not exist; give the store the trial was recorded in")
    with Store(path, read_only=True) as store:
        try:
            result = store.get(trial_id)
        except KeyError as exc:
            raise UsageError("TRIAL", f"{exc.args[0]} in {path}") from None
        events_text = store.series(result.trial_id, "events") or ""
        samples_text = store.series(result.trial_id, "samples")
        meta_text = store.series(result.trial_id, "sampler_meta")
        spans_text = store.series(result.trial_id, "spans")
    events = parse_events(events_text)
    meta = SamplerMeta(**json.loads(meta_text)) if meta_text else None
    samples = parse_samples(samples_text, meta) if samples_text else None
    spans = SpanTable.from_json(spans_text) if spans_text else None
    return StoredTrial(result, events, samples, spans)


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
