"""Cold start in the worker: the first step runs plain (the memory categorizer and the tracer move to the next one),
so the figure is the step an app meets; the events become the result's cold_start group.  The command-line half
is in tests/e2e/cli/test_cold_start.py."""

from __future__ import annotations

import io

import pytest

from edgebench.agents.python.worker import run
from edgebench.backends.fake import session as fake_session
from edgebench.measure.cold_start import cold_start
from edgebench.records.events import EventWriter, FirstStep, ModelLoad, Ready, Step, parse_events
from edgebench.records.trial import Trial


class _Categorizer:
    """Wraps the step like torch's memory categorizer: the first call it sees is instrumented."""

    def __init__(self, calls: list[str]) -> None:
        self.calls = calls
        self.done = False

    def categorizing(self, step):
        def wrapped():
            if self.done:
                return step()
            self.done = True
            self.calls.append("categorized")
            return step()

        return wrapped

    def ensure(self, step) -> None:
        if not self.done:
            self.done = True
            self.calls.append("categorized (extra)")
            step()

    def with_peak(self, peak):
        return None


def _instrumented_session(monkeypatch, calls: list[str]):
    class Session(fake_session.FakeSession):
        def train_step(self):
            calls.append("step")
            return super().train_step()

        def memory_categorizer(self):
            return _Categorizer(calls)

    def open_session(trial):
        return Session((1, 28, 28), 10, fake_session.StepModel(step_ms=0.2), None)

    monkeypatch.setattr(fake_session, "open_session", open_session)


def _worker_events(trial: Trial) -> list:
    out = io.StringIO()
    run(trial, EventWriter(out), lambda: None)
    return parse_events(out.getvalue())


@pytest.mark.parametrize(("warmup", "counted_as"), [(2, "warmup"), (0, None)])
def test_the_first_step_runs_before_any_hook_and_is_its_own_event(monkeypatch, warmup, counted_as):
    calls: list[str] = []
    _instrumented_session(monkeypatch, calls)
    trial = Trial(model="mnist_mlp", backend="fake", steps=2, warmup=warmup, infer_steps=0)
    events = _worker_events(trial)
    assert calls[0] == "step"  # the first step ran plain: the categorizer came after it
    assert calls[1].startswith("categorized")
    first = [e for e in events if isinstance(e, FirstStep)]
    assert len(first) == 1 and first[0].mode == "train" and first[0].counted_as == counted_as
    ready = events[0]
    assert isinstance(ready, Ready) and ready.model_load is not None
    assert ready.model_load.what.startswith("fake: the whole session opening")  # the fake times no load itself
    assert ready.model_load.seconds > 0 and ready.model_load.peak_memory_bytes
    if warmup:  # the first warm-up step is the first step, the same interval
        step0 = next(e for e in events if isinstance(e, Step) and e.phase == "warmup")
        assert step0.start_ns <= first[0].start_ns < first[0].end_ns <= step0.end_ns


def test_events_become_the_cold_start_group_with_what_limits_it():
    load = ModelLoad(seconds=0.25, peak_memory_bytes=300 << 20, added_memory_bytes=40 << 20, what="x: load",
                     peak_since="process start")  # fmt: skip
    events = [Ready(model_load=load), FirstStep(mode="infer", start_ns=1_000_000, end_ns=13_500_000)]
    got = cold_start(Trial(model="lenet", mode="infer"), events)
    assert got is not None
    assert (got.model_load_s, got.model_load_peak_memory_bytes, got.model_load_added_memory_bytes) == (
        0.25, 300 << 20, 40 << 20,
    )  # fmt: skip
    assert got.first_step_ms == pytest.approx(12.5) and got.first_step_mode == "infer"
    assert got.first_step_counted_as == "extra"
    assert got.notes and "since it started" in got.notes[0]
    assert cold_start(Trial(model="lenet"), [Ready()]) is None  # a worker older than the record
    command = Trial(model="lenet", command="./bench", step_pattern="mnn-train")
    said = cold_start(command, [Ready(), FirstStep(mode="train", start_ns=0, end_ns=5_000_000, counted_as="warmup")])
    assert said is not None and said.first_step_counted_as == "command" and "tool's own start" in said.notes[0]
