"""One finished-trial record: the store, the rescue file and the fleet's reply carry the same thing, and a stored
trial can be measured again."""

from __future__ import annotations

import json

import pytest

from edgebench.errors import UsageError
from edgebench.fleet.task import DeviceReply
from edgebench.launch.trial import remeasure
from edgebench.records.finished import KIND, FinishedTrial
from edgebench.store import Store
from edgebench.store.rescue import keep_unsaved, load_unsaved
from edgebench.store.trials import load_finished, save_finished
from tests.factories import SAMPLES_CSV as CSV
from tests.factories import finished

SPANS = json.dumps({"format": "edgebench-spans"})  # opaque to the record: kept as text, parsed only on demand


def same(a: FinishedTrial, b: FinishedTrial) -> None:
    assert a.result == b.result and a.events == b.events and a.samples_csv == b.samples_csv
    assert a.sampler_meta == b.sampler_meta and a.spans_json == b.spans_json and a.run == b.run


def test_the_record_round_trips_through_its_one_json():
    record = finished()
    text = record.to_json()
    assert json.loads(text)["kind"] == KIND and json.loads(text)["version"] == 2
    same(FinishedTrial.from_json(text), record)
    assert record.result.latency.step_ms.n == 3 and record.run.trial.model == "lenet"


def test_the_store_keeps_the_record_in_its_rows_and_gives_it_back(tmp_path):
    record = finished()
    with Store(tmp_path / "s.sqlite") as store:
        save_finished(store, record)
        same(load_finished(store, "20260101"), record)
        assert store.series(record.trial_id, "samples") == CSV  # the same rows as before the record existed
        assert '"event": "ready"' in store.series(record.trial_id, "events")


def test_a_trial_stored_before_the_record_loads_without_its_run(tmp_path):
    old = finished()
    with Store(tmp_path / "s.sqlite") as store:
        store.save(old.result, {"events": old.series()["events"], "samples": CSV})
        loaded = load_finished(store, old.trial_id)
    assert loaded.run is None and loaded.samples_csv == CSV and loaded.events == old.events
    with pytest.raises(ValueError, match="does not keep its run"):
        remeasure(loaded)


def test_the_rescue_file_is_the_record(tmp_path):
    record = finished()
    path = keep_unsaved(record, tmp_path / "store.sqlite")
    assert json.loads(path.read_text()) == json.loads(record.to_json())
    same(load_unsaved(path), record)


def test_a_rescue_file_of_the_first_format_still_imports(tmp_path):
    record = finished()
    path = tmp_path / "edgebench-unsaved-old.json"
    series = {k: v for k, v in record.series().items() if k != "run"}
    path.write_text(json.dumps({"kind": KIND, "result": record.result.model_dump(mode="json"), "series": series}))
    loaded = load_unsaved(path)
    assert loaded.result == record.result and loaded.events == record.events and loaded.samples_csv == CSV


def test_a_rescue_file_from_a_newer_edgebench_is_one_line(tmp_path):
    path = tmp_path / "edgebench-unsaved-new.json"
    path.write_text(json.dumps({**json.loads(finished().to_json()), "version": 9}))
    with pytest.raises(UsageError, match=r"cannot be read as a kept trial .*version 9"):
        load_unsaved(path)


def test_the_fleet_reply_carries_the_record_and_the_fleet_facts():
    record = finished()
    reply = DeviceReply(record.to_json(), "host-a", 1.5, "fixed 1.5 s", {"policy0": 1_000_000}, {"cpu": 40.0})
    same(reply.finished, record)
    assert (reply.host, reply.freq_set_khz) == ("host-a", {"policy0": 1_000_000})


def test_remeasure_measures_the_kept_events_and_samples_again(tmp_path, monkeypatch):
    record = finished().model_copy(update={"result": finished().result.model_copy(update={"target": "ssh://host-a"})})
    with Store(tmp_path / "s.sqlite") as store:
        save_finished(store, record)
        stored = load_finished(store, record.trial_id)
    again = remeasure(stored)
    assert again.trial_id == record.trial_id and again.result.target == "ssh://host-a"
    assert again.result.latency.step_ms == record.result.latency.step_ms and again.events == record.events

    import edgebench.measure.stats as stats

    real = stats.summarize
    monkeypatch.setattr("edgebench.measure.trial.summarize", lambda values, *a, **k: real([2 * v for v in values]))
    fixed = remeasure(stored)  # "after a measurement fix": the figures follow the measurement, not the stored row
    assert fixed.result.latency.step_ms.mean == pytest.approx(2 * record.result.latency.step_ms.mean)
