"""A finished trial: its result and everything measured to get it, as one typed, versioned record.

One record, as pyperf writes one JSON: the launcher builds it, the store keeps it (the result row plus its named
series), the unsaved-trial rescue file *is* its JSON, a fleet host sends it back to the driver, and ``import``
reads it.  It keeps what :func:`edgebench.measure.trial.measure` needs besides the series (the trial as run, the
device's environment, the agent's failure), so a stored trial can be measured again after a measurement fix.

Nothing here imports above the records: parsing the sensor CSV into arrays is the sensors' job, so the record holds
the CSV text and its :class:`SamplerMeta`, and parses events and spans (records of their own) on demand.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator

from edgebench.records.bundle import Failure, MemoryWatch, TrialBundle
from edgebench.records.events import Event, as_events, dump_events, parse_events
from edgebench.records.model import Record
from edgebench.records.result import TrialResult
from edgebench.records.result_schema import load_result
from edgebench.records.sampling import SamplerMeta
from edgebench.records.throttle import ThrottleReference
from edgebench.records.trial import Trial

if TYPE_CHECKING:  # spans bring numpy, which a command that reads no spans need not import
    from edgebench.records.spans import SpanTable

#: The format's name, in every file that holds the record.  It is the name rescue files carried before the record
#: existed (version 1: ``{"kind", "result", "series"}``), so files kept then still import.
KIND = "edgebench-unsaved-trial"
#: Version 2: this record; version 1 (no ``version`` key) is read through :meth:`FinishedTrial.from_series`.
FINISHED_VERSION = 2

#: The names of the series rows the store keeps beside a result (its table and the names are unchanged).
EVENTS, SAMPLES, SAMPLER_META, SPANS, RUN = "events", "samples", "sampler_meta", "spans", "run"


class AgentRun(Record):
    """The agent's bundle without its series: the trial as it ran on the device and what measuring it needs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    trial: Trial
    env: dict[str, Any]
    throttle_reference: ThrottleReference | None = None
    failure: Failure | None = None
    watch: MemoryWatch | None = None


class FinishedTrial(Record):
    """One finished trial: the result and its raw series (step events, sensor samples with their meta, spans)."""

    model_config = ConfigDict(frozen=True, extra="forbid", ignored_types=(cached_property,))

    kind: Literal["edgebench-unsaved-trial"] = KIND
    version: int = FINISHED_VERSION
    result: TrialResult
    events: list[Event] = Field(default_factory=list)
    #: The sampler's CSV and what it recorded besides the numbers; None when the trial was not sampled.
    samples_csv: str | None = None
    sampler_meta: SamplerMeta | None = None
    #: The span table (JSON) of a traced trial (``--trace``), else None.
    spans_json: str | None = None
    #: What ``measure`` needs besides the series; None for a trial that never reached a device (a launcher error)
    #: and for trials stored before this record kept it.
    run: AgentRun | None = None

    @field_validator("version")
    @classmethod
    def _known_version(cls, version: int) -> int:
        if version != FINISHED_VERSION:
            raise ValueError(
                f"finished-trial version {version}: this edgebench reads version {FINISHED_VERSION} (and 1); "
                "install the edgebench that wrote it, or a newer one here"
            )
        return version

    @property
    def trial_id(self) -> str:
        return self.result.trial_id

    @classmethod
    def from_bundle(cls, result: TrialResult, bundle: TrialBundle) -> FinishedTrial:
        """The record of ``bundle`` measured into ``result``; a failed trial's partial spans are not kept."""
        return cls(
            result=result,
            events=bundle.events,
            samples_csv=bundle.samples_csv,
            sampler_meta=bundle.sampler_meta,
            spans_json=bundle.spans_json if bundle.failure is None else None,
            run=AgentRun(
                trial=bundle.trial,
                env=bundle.env,
                throttle_reference=bundle.throttle_reference,
                failure=bundle.failure,
                watch=bundle.watch,
            ),
        )

    def bundle(self) -> TrialBundle | None:
        """The agent's bundle again (for measuring it anew), or None when the record does not keep its run."""
        if self.run is None:
            return None
        return TrialBundle(
            trial=self.run.trial,
            events=self.events,
            samples_csv=self.samples_csv,
            sampler_meta=self.sampler_meta,
            spans_json=self.spans_json,
            env=self.run.env,
            throttle_reference=self.run.throttle_reference,
            failure=self.run.failure,
            watch=self.run.watch,
        )

    # -- the store's named series --------------------------------------------------------------------------

    def series(self) -> dict[str, str]:
        """The raw series the store keeps beside the result, by name: step events (JSON lines), sensor samples
        (CSV) with the sampler's meta (JSON), the spans of a traced trial (JSON) and the run (JSON)."""
        series = {EVENTS: dump_events(as_events(self.events))}
        if self.samples_csv is not None:
            series[SAMPLES] = self.samples_csv
        if self.spans_json is not None:
            series[SPANS] = self.spans_json
        if self.sampler_meta is not None:
            series[SAMPLER_META] = json.dumps(asdict(self.sampler_meta))
        if self.run is not None:
            series[RUN] = self.run.model_dump_json()
        return series

    @classmethod
    def from_series(cls, result: TrialResult, series: dict[str, str | None]) -> FinishedTrial:
        """The record from a result and its named series (a store's rows, a version-1 rescue file)."""
        from edgebench.parsing import json_text

        meta = series.get(SAMPLER_META)
        run = series.get(RUN)
        return cls(
            result=result,
            events=parse_events(series.get(EVENTS) or ""),
            samples_csv=series.get(SAMPLES),
            sampler_meta=SamplerMeta(**json_text(meta)) if meta else None,
            spans_json=series.get(SPANS),
            run=AgentRun.model_validate_json(run) if run else None,
        )

    # -- one JSON ------------------------------------------------------------------------------------------

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> FinishedTrial:
        """The record from its JSON (or a version-1 rescue file); ``ValueError`` says what is wrong with it."""
        from edgebench.parsing import json_text

        try:
            data = json_text(text)
        except ValueError as exc:
            raise ValueError(f"not JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise ValueError(f'no "kind": "{KIND}"')
        if data.get("version", 1) not in (1, FINISHED_VERSION):
            cls._known_version(data["version"])
        try:
            if "version" not in data:  # version 1: the result and its series by name
                result = load_result(data["result"])
                return cls.from_series(result, dict(data.get("series") or {}))
            return cls.model_validate({**data, "result": load_result(data["result"])})
        except KeyError as exc:
            raise ValueError(f"no {exc.args[0]!r} in it") from None
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(map(str, error["loc"]))
            raise ValueError(f"not a finished trial this edgebench reads: {where}: {error['msg']}") from None

    # -- what readers need, parsed once --------------------------------------------------------------------

    @cached_property
    def spans(self) -> SpanTable | None:
        from edgebench.records.spans import SpanTable

        return SpanTable.from_json(self.spans_json) if self.spans_json else None
