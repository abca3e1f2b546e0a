"""The seams a trial travels through: typed events, the agent's versioned bundle, and the target the launcher asks.

One real trial runs through the agent's command line (as a remote target will run it) and is measured from the
bundle it printed; the rest use hand-built records.
"""

from __future__ import annotations

import io
import json
import os

import pytest
from pydantic import ValidationError

from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.launch.trial import run_trial
from edgebench.measure.trial import measure
from edgebench.records.bundle import BUNDLE_VERSION, Failure, TrialBundle
from edgebench.records.events import Done, EventWriter, Ready, Step, as_events, dump_events, parse_events
from edgebench.records.result import TrialResult
from edgebench.records.trial import Trial
from edgebench.targets import open_target
from edgebench.targets.base import TargetCapabilities
from edgebench.targets.local import LocalTarget
from tests.factories import events, result


def test_event_writer_refuses_a_misspelled_or_missing_field():
    out = io.StringIO()
    emit = EventWriter(out)
    emit("step", phase="train", index=0, start_ns=1, end_ns=2, loss=0.5)
    with pytest.raises(ValidationError, match="end_nss"):
        emit("step", phase="train", index=1, start_ns=2, end_nss=3)
    with pytest.raises(ValidationError, match="reason"):
        emit("error", status="crashed")
    assert parse_events(out.getvalue()) == [Step(phase="train", index=0, start_ns=1, end_ns=2, loss=0.5)]


def test_events_round_trip_in_the_stored_line_format_and_a_torn_line_ends_them():
    typed = as_events(events([10.0, 11.0], [2.0]))
    text = dump_events(typed)
    assert text.splitlines()[0].startswith('{"event": "step", "phase": "warmup"')  # as stored since schema 1
    assert parse_events(text) == typed
    assert parse_events(text + '\n{"event": "st') == typed  # a worker killed mid-write


def test_trial_result_is_frozen_and_refuses_unknown_keys():
    r = result("20260101-000000-0001", [10.0, 12.0])
    with pytest.raises(ValidationError):
        r.status = "crashed"
    with pytest.raises(ValidationError, match="energy_per_sampel_j"):
        TrialResult(**r.model_dump(), energy_per_sampel_j=1.0)


def test_a_bundle_of_another_version_is_refused_with_both_versions():
    bundle = TrialBundle(trial=Trial(), events=[], env={})
    record = json.loads(bundle.model_dump_json())
    assert TrialBundle.model_validate(record) == bundle
    with pytest.raises(ValidationError, match=f"bundle version 99, this edgebench reads version {BUNDLE_VERSION}"):
        TrialBundle.model_validate({**record, "bundle_version": 99})


class RecordingTarget:
    """A device the launcher can only reach through this object: four cores of its own, a canned bundle."""

    name = "recording"
    capabilities = TargetCapabilities()  # nothing beyond what every target does

    def __init__(self) -> None:
        self.ran: list[Trial] = []
        self.file_reads = 0

    def sysfs(self):
        """The launcher reads no device file for a run but the thermal zones' trip points, before and after it
        (hygiene): a device whose tree has none."""
        self.file_reads += 1
        return SysFS("/nonexistent")

    def allowed_cores(self) -> tuple[int, ...]:
        return (4, 5, 6, 7)

    def is_root(self) -> bool:
        return False

    def environment(self) -> dict:
        return {"hostname": "board-a"}

    def missing_device(self, backend: str, device: str) -> str | None:
        return None

    def run_python_agent(self, module: str, trial: Trial, *, sample: bool = True) -> TrialBundle:
        self.ran.append(trial)
        steps = [e for e in as_events(events([10.0, 12.0, 11.0])) if isinstance(e, Step)]
        return TrialBundle(trial=trial, events=[Ready(pid=7), *steps, Done(stopped_by="fixed")], env=self.environment())


def test_the_launcher_places_and_runs_a_trial_only_through_its_target():
    target = RecordingTarget()
    run = run_trial(Trial(model="lenet", steps=3, cores=(5, 6)), target=target)
    assert [t.cores for t in target.ran] == [(5, 6)] and target.ran[0].threads == 2
    assert run.result.ok and run.result.device.hostname == "board-a" and run.result.latency.step_ms.n == 3
    assert target.file_reads == 2 and run.result.hygiene.zone_trip_start is None  # the trip points, start and end
    run = run_trial(Trial(model="lenet", steps=3), target=target)
    assert target.ran[-1].cores == (4, 5, 6, 7)  # the device's cores, not this machine's
    with pytest.raises(UsageError, match="cpu 0 is not available here"):
        run_trial(Trial(model="lenet", cores=(0,)), target=target)


class PhoneLikeTarget(RecordingTarget):
    """A device whose class declares a thermal status of its own and mirrored files."""

    capabilities = TargetCapabilities(thermal_status=True, mirrored_sysfs=True)

    def thermal_status(self) -> int | None:
        return 3  # severe


class UndeclaredTarget(RecordingTarget):
    """A thermal status method its class does not declare: the launcher reads declarations, it does not probe."""

    def thermal_status(self) -> int | None:
        raise AssertionError("asked for an ability the target did not declare")


def test_the_launcher_reads_what_a_target_declares_it_can_do():
    run = run_trial(Trial(model="lenet", steps=3), target=PhoneLikeTarget())
    assert (run.result.hygiene.thermal_status_start, run.result.hygiene.thermal_status_end) == (3, 3)
    target = UndeclaredTarget()
    run = run_trial(Trial(model="lenet", steps=3), target=target)
    assert run.result.ok and run.result.hygiene.thermal_status_start is None
    assert target.file_reads == 2  # the trip points, start and end, as for any device without a thermal service


def test_a_failed_bundle_becomes_a_failed_result_with_its_reason():
    bundle = TrialBundle(
        trial=Trial(), events=[], env={}, failure=Failure(status="timeout", reason="exceeded the 1 s timeout")
    )
    r = measure(bundle, "20260101-000000-0003")
    assert (r.status, r.reason) == ("timeout", "exceeded the 1 s timeout")


def test_targets_open_by_name_and_an_unknown_scheme_lists_the_known_ones(tmp_path):
    target = open_target("local", sysfs_root=str(tmp_path))
    assert isinstance(target, LocalTarget) and target.sysfs().root == tmp_path
    assert target.allowed_cores() == tuple(sorted(os.sched_getaffinity(0)))
    with pytest.raises(ValueError, match="unknown target 'ftp'; choose one of: local"):
        open_target("ftp://board")
