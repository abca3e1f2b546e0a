"""The Chrome trace export checked against the trace-event format, and the checker itself."""

import json
import stat

import numpy as np
import pytest

from edgebench.measure.attribution import PowerSeries
from edgebench.records.device import DeviceEnvironment
from edgebench.records.result import SamplerSummary, TrialResult, stored_trial
from edgebench.records.sampling import SamplerMeta
from edgebench.records.spans import BACKWARD, FORWARD, span_table
from edgebench.report.trace import DEVICE_PID, chrome_trace
from edgebench.report.trace_check import check_trace, dumps, perfetto_check
from edgebench.sensors.base import PowerChannel
from edgebench.sensors.samples import Samples

MS = 1_000_000
T0 = 5_000_000_123  # an arbitrary monotonic origin with sub-microsecond digits


def trial() -> TrialResult:
    return TrialResult(
        trial_id="20260101-000000-abcd", status="ok", device=DeviceEnvironment(hostname="board"),
        trial=stored_trial({"model": "net", "batch_size": 4, "threads": 2, "cores": [0, 1], "steps": 2, "warmup": 1}),
        sampler=SamplerSummary(interval_ms=10, samples=12, late_samples=0, cpu_pct_of_core=0.5, sensors=[],
                               unavailable={}),
    )  # fmt: skip


EVENTS = [
    {"event": "ready", "pid": 4242},
    {"event": "step", "phase": "warmup", "index": 0, "start_ns": T0, "end_ns": T0 + 30 * MS, "loss": 2.0},
    {"event": "step", "phase": "train", "index": 0, "start_ns": T0 + 30 * MS, "end_ns": T0 + 70 * MS, "loss": 1.5},
    {"event": "step", "phase": "train", "index": 1, "start_ns": T0 + 70 * MS, "end_ns": T0 + 110 * MS, "loss": 1.2},
    {"event": "done"},
]


def spans():
    rows = []
    for s in (T0 + 30 * MS, T0 + 70 * MS):
        rows += [
            (0, FORWARD, s + 100, s + 10 * MS),
            (1, FORWARD, s + 100, s + 6 * MS + 999),  # ends 999 ns after a microsecond boundary
            (2, FORWARD, s + 6 * MS + 999, s + 10 * MS),  # ends exactly with its parent
            (0, BACKWARD, s + 12 * MS, s + 36 * MS + 500),
            (2, BACKWARD, s + 12 * MS, s + 16 * MS + 1),
            (1, BACKWARD, s + 16 * MS + 1, s + 36 * MS + 500),
        ]
    return span_table("layers", ["Net", "conv", "relu"], ["Net", "Conv2d", "ReLU"], [-1, 0, 0],
                      [(*r, 4242) for r in rows])  # fmt: skip


def samples() -> Samples:
    t = T0 + np.arange(12, dtype=np.int64) * 10 * MS
    active = np.arange(12, dtype=float)
    return Samples(t, {
        "cpu0_active_ticks": active, "cpu0_idle_ticks": np.zeros(12),
        "cpu1_active_ticks": np.floor(active / 2), "cpu1_idle_ticks": np.zeros(12),  # a tick every other interval
        "cpu0_freq_khz": np.full(12, 1_500_000.0), "cpu1_freq_khz": np.full(12, 1_800_000.0),
        "temp_cpu_thermal_mc": np.where(np.arange(12) % 10 == 0, 48_000.0, np.nan),
        "vdd_in_power_mw": np.full(12, 4_500.0),
        "mem_available_bytes": np.full(12, 2.0 * 2**30), "proc_rss_bytes": np.full(12, 300.0 * 2**20),
    }, SamplerMeta(interval_ms=10, columns=[], sensors=[], unavailable={}, power_channels=[VDD_IN.__dict__]),
       labels={"temp_cpu_thermal_mc": "cpu-thermal (thermal_zone0)"})  # fmt: skip


VDD_IN = PowerChannel("VDD_IN", "jetson_power", "total", power_column="vdd_in_power_mw")


def build() -> dict:
    return json.loads(dumps(chrome_trace(trial(), EVENTS, samples(), spans())))


def test_the_trace_passes_the_structural_checks():
    assert check_trace(build()) == []


def test_slices_steps_and_layers_on_the_worker_thread_in_microseconds():
    doc = build()
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert {(e["pid"], e["tid"]) for e in slices} == {(4242, 4242)}
    steps = [e for e in slices if e["cat"] == "step"]
    assert [e["name"] for e in steps] == ["warmup step 0", "train step 0", "train step 1"]
    assert steps[1]["ts"] == 30_000 and steps[1]["dur"] == 40_000  # 40 ms in microseconds
    assert all(isinstance(e["ts"], int) and isinstance(e["dur"], int) for e in slices)
    names = {e["name"] for e in slices}
    assert {"conv", "relu", "Net", "conv (backward)", "relu (backward)", "Net (backward)"} <= names
    assert sum(1 for e in slices if e["cat"] in ("forward", "backward")) == 12


def test_counter_tracks_one_value_each_with_units():
    doc = build()
    counters = [e for e in doc["traceEvents"] if e["ph"] == "C"]
    assert all(len(e["args"]) == 1 for e in counters)
    tracks = {(e["name"], next(iter(e["args"]))) for e in counters}
    assert {
        ("cpu0 utilization", "pct"), ("cpu1 utilization", "pct"), ("cpu0 frequency", "MHz"), ("cpu1 frequency", "MHz"),
        ("temperature cpu-thermal (thermal_zone0)", "C"), ("power VDD_IN", "W"), ("memory available", "MiB"),
        ("worker resident memory", "MiB"),
    } == tracks  # fmt: skip
    cpu1 = [e for e in counters if e["name"] == "cpu1 utilization"]
    # intervals without a tick are merged into the next: one value per 20 ms, each 100%
    assert [e["args"]["pct"] for e in cpu1] == [100.0] * 5
    assert np.diff([e["ts"] for e in cpu1]).tolist() == [20_000] * 4
    freq = [e for e in counters if e["name"] == "cpu1 frequency"]
    assert freq[0]["args"]["MHz"] == 1800.0 and freq[0]["pid"] == DEVICE_PID
    temps = [e for e in counters if e["name"].startswith("temperature")]
    assert [e["args"]["C"] for e in temps] == [48.0, 48.0]  # NaN rows (not due) emit nothing
    rss = next(e for e in counters if e["name"] == "worker resident memory")
    assert rss["pid"] == 4242 and rss["args"]["MiB"] == 300.0


def test_metadata_names_every_process_and_thread():
    meta = [e for e in build()["traceEvents"] if e["ph"] == "M"]
    names = {(e["name"], e["pid"]): e["args"].get("name") for e in meta}
    assert "net" in names[("process_name", 4242)] and "20260101-000000-abcd" in names[("process_name", 4242)]
    assert names[("thread_name", 4242)] == "worker main thread"
    assert names[("process_name", DEVICE_PID)].startswith("device (board, sampled every 10 ms)")


def test_a_given_power_series_gets_its_own_track():
    power = PowerSeries(T0 + np.array([0, 50, 100]) * MS, np.array([3.0, 5.0, 4.0]), "bench supply")
    doc = chrome_trace(trial(), EVENTS, None, spans(), power)
    assert check_trace(doc) == []
    track = [e["args"]["W"] for e in doc["traceEvents"] if e["ph"] == "C" and e["name"] == "power bench supply"]
    assert track == [3.0, 5.0, 4.0]


def test_a_trial_without_spans_or_samples_still_exports_its_steps():
    doc = chrome_trace(trial(), EVENTS)
    assert check_trace(doc) == []
    assert sum(1 for e in doc["traceEvents"] if e["ph"] == "X") == 3


def doc_with(*events):
    meta = [{"ph": "M", "name": "process_name", "pid": 1, "tid": 1, "args": {"name": "p"}},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}}]  # fmt: skip
    return {"traceEvents": meta + list(events)}


def x(name, ts, dur, tid=1):
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid}


@pytest.mark.parametrize(
    ("events", "problem"),
    [
        ([x("a", 0, 10), x("b", 5, 10)], "without nesting"),
        ([{"ph": "C", "name": "c", "ts": 0, "pid": 1, "tid": 1, "args": {"a": 1, "b": 2}}], "exactly one value"),
        ([{"ph": "C", "name": "c", "ts": 0, "pid": 1, "tid": 1, "args": {"a": "hot"}}], "not a finite number"),
        ([x("a", 5_000_000_000_123, 10)], "nanoseconds"),
        ([x("a", -1, 10)], "non-negative"),
        ([x("a", 0, 10, tid=2)], "thread 1/2 has slices but no thread_name"),
        ([{"ph": "B", "name": "a", "ts": 0, "pid": 1, "tid": 1}], "never end"),
        ([{"ph": "E", "name": "a", "ts": 0, "pid": 1, "tid": 1}], "without a begin"),
        ([{"ph": "Q", "name": "a", "ts": 0, "pid": 1, "tid": 1}], "unknown phase"),
        ([{"ph": "X", "name": "a", "ts": 0, "dur": 1, "pid": 9, "tid": 1}], "process 9 has events but no process_name"),
    ],
)
def test_the_checker_catches_what_breaks_an_import(events, problem):
    problems = check_trace(doc_with(*events))
    assert any(problem in p for p in problems), problems


def test_the_checker_accepts_nesting_and_balanced_begin_end():
    events = [x("a", 0, 10), x("b", 0, 10), x("c", 2, 3), x("d", 10, 5),
              {"ph": "B", "name": "e", "ts": 20, "pid": 1, "tid": 1},
              {"ph": "E", "name": "e", "ts": 30, "pid": 1, "tid": 1}]  # fmt: skip
    assert check_trace(doc_with(*events)) == []


def test_nan_cannot_reach_the_file():
    with pytest.raises(ValueError):
        dumps({"traceEvents": [{"ph": "C", "name": "c", "ts": 0, "pid": 1, "tid": 1, "args": {"v": float("nan")}}]})


def fake_processor(tmp_path, output: str, code: int = 0):
    script = tmp_path / "trace_processor_shell"
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' '{output}'\nexit {code}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_perfetto_check_compares_what_it_imported(tmp_path):
    trace = tmp_path / "t.json"
    trace.write_text("{}")
    ok = perfetto_check(trace, fake_processor(tmp_path, '"slices","counters","errors"\n15,40,0'), 15)
    assert ok.ok and "15 slices" in ok.message
    lost = perfetto_check(trace, fake_processor(tmp_path, "slices counters errors\n12 40 0"), 15)
    assert not lost.ok and "wrote 15" in lost.message
    broken = perfetto_check(trace, fake_processor(tmp_path, "boom", code=1), 15)
    assert not broken.ok and "failed" in broken.message


def test_the_default_trace_file_is_named_inside_the_current_folder(tmp_path, monkeypatch, capsys):
    """Issue 39, paths from data: a trial id is data (an imported store's); ``trace ID`` names its file after it."""
    from edgebench.cli import main
    from edgebench.store import Store
    from tests.factories import add

    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    with Store(tmp_path / "s.sqlite") as store:
        add(store, "../escaped", [10.0, 11.0, 12.0])
    assert main(["trace", "../escaped", "--store", str(tmp_path / "s.sqlite")]) == 0
    assert sorted(p.name for p in (tmp_path / "here").iterdir()) == ["_escaped.trace.json"]
    assert not (tmp_path / "escaped.trace.json").exists()
