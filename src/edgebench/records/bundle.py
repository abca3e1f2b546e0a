"""What a device-side agent hands back for one trial: everything measured there, on the device's clock.

The agent runs the worker, the sampler, the idle baseline and the memory watchdog on the device; the workstation
turns the bundle into a :class:`~edgebench.records.result.TrialResult` (``measure.trial.measure``) and stores it
with the raw series.  The bundle is versioned so that a workstation refuses one from an agent that speaks another
version instead of misreading it.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any, Literal

from pydantic import ConfigDict, field_validator

from edgebench.records.events import Event
from edgebench.records.model import Record
from edgebench.records.sampling import SamplerMeta
from edgebench.records.throttle import ThrottleReference
from edgebench.records.trial import Trial

BUNDLE_VERSION = 1


class Failure(Record):
    """Why a trial did not run to its end, as the agent saw it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: Literal["oom", "crashed", "timeout", "killed"]
    reason: str


class MemoryWatch(Record):
    """What the memory watchdog saw of a trial run under ``--memory-budget``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    exceeded: bool
    peak_rss_bytes: int | None


class TrialBundle(Record):
    """One trial as measured on its device: events, samples with their meta, spans, the device's environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bundle_version: int = BUNDLE_VERSION
    #: The trial as run: placement (cores, threads) resolved on the device.
    trial: Trial
    events: list[Event]
    #: The sampler's CSV and what it recorded besides the numbers; None when the trial was not sampled.
    samples_csv: str | None = None
    sampler_meta: SamplerMeta | None = None
    #: The span table (JSON) of a traced trial (``--trace``).
    spans_json: str | None = None
    #: CPU, cores, governors, memory and OS of the device, read before the trial.
    env: dict[str, Any]
    #: The device's reference clocks and hot threshold before the trial heated it; None where it has no cpufreq.
    throttle_reference: ThrottleReference | None = None
    failure: Failure | None = None
    watch: MemoryWatch | None = None

    @field_validator("bundle_version")
    @classmethod
    def _same_version(cls, version: int) -> int:
        if version != BUNDLE_VERSION:
            raise ValueError(
                f"the device's agent sent trial bundle version {version}, this edgebench reads version "
                f"{BUNDLE_VERSION}: install the same edgebench version on the device and here"
            )
        return version


@cache
def schema_fingerprint() -> str:
    """A short hash of the bundle's JSON schema (the trial and the events inside it): two installs whose bundles
    would read differently have different fingerprints even where nobody bumped :data:`BUNDLE_VERSION`."""
    schema = json.dumps(TrialBundle.model_json_schema(), sort_keys=True)
    return hashlib.sha256(schema.encode()).hexdigest()[:12]
