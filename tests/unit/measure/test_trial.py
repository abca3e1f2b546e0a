"""build_result on the edges: a trial without samples, or whose worker could not reset its memory high-water mark."""

import pytest

from edgebench.measure.trial import build_result
from edgebench.records.trial import Trial

MS = 1_000_000


def events(peak_bytes):
    steps = [
        {"event": "step", "phase": "train", "index": i, "start_ns": i * 100 * MS, "end_ns": (i + 1) * 100 * MS,
         "loss": 2.0 - i / 10}
        for i in range(4)
    ]  # fmt: skip
    done = {"event": "done", "stopped_by": "fixed: 4 steps", "train_cpu_s": 0.2, "train_peak_memory_bytes": peak_bytes}
    return [{"event": "ready", "params": 10, "env": {}}, *steps, done]


def test_without_samples_or_memory_peak_the_result_says_unknown():
    r = build_result(Trial(steps=4, batch_size=2), "t", events(None), None, {})
    assert r.ok and r.memory.peak_bytes is None and r.memory.peak_source is None
    assert r.cpu.process_pct == pytest.approx(50.0)  # 200 ms of CPU over a 400 ms window
    assert r.cpu.util_pct is None and r.energy.energy_j is None


def test_worker_peak_is_used_when_present():
    r = build_result(Trial(steps=4, batch_size=2), "t", events(123 * 2**20), None, {})
    assert (r.memory.peak_bytes, r.memory.peak_source) == (123 * 2**20, "vmhwm")
    assert r.latency.step_ms.n == 4 and r.latency.throughput_sps == pytest.approx(2 / 0.100)


def test_steps_shorter_than_the_clock_give_no_throughput():
    """A --command workload stamped on /proc/uptime (10 ms steps) can show steps of 0 ms: throughput unknown."""
    same_tick = [
        {**e, "end_ns": e["start_ns"]} if e["event"] == "step" else e for e in events(None)
    ]  # fmt: skip
    r = build_result(Trial(steps=4, batch_size=2), "t", same_tick, None, {})
    assert r.latency.step_ms.mean == 0 and r.latency.throughput_sps is None


def test_worker_cpu_is_read_over_the_window_its_cpu_time_covers():
    # 900 ms of CPU read over 500 ms of wall time on 2 cores: 180%.  Over the 400 ms the steps span it would read
    # 225%, more than two cores can give: the CPU readings start before the first step and end after the last.
    recorded = events(None)
    recorded[-1] |= {"train_cpu_s": 0.9, "train_cpu_window_s": 0.5}
    r = build_result(Trial(steps=4, batch_size=2, cores=(0, 1)), "t", recorded, None, {})
    assert r.cpu.process_pct == pytest.approx(180.0)
    assert r.cpu.process_pct <= 100 * len(r.trial.cores)


def test_worker_cpu_over_a_window_shorter_than_the_accounting_tick_is_withheld_with_a_note():
    """Seen: 599% on 2 cores from 30 ms of CPU over a 5 ms window; the kernel's tick cannot resolve it."""
    recorded = events(None)
    recorded[-1] |= {
        "train_cpu_s": 0.030,
        "train_cpu_window_s": 0.005,
        "infer_cpu_s": 0.03,
        "infer_cpu_window_s": 0.005,
    }
    recorded.insert(-1, {"event": "step", "phase": "infer", "index": 0, "start_ns": 0, "end_ns": 5 * MS})
    r = build_result(Trial(steps=4, batch_size=2, cores=(0, 1)), "t", recorded, None, {})
    assert r.cpu.process_pct is None and r.cpu.infer_process_pct is None
    notes = " ".join(r.measurement_notes or [])
    assert "worker CPU of the measured steps withheld" in notes and "5.0 ms" in notes
    assert "worker CPU of the inference passes withheld" in notes


def test_worker_cpu_above_what_the_cores_allow_is_withheld():
    recorded = events(None)
    recorded[-1] |= {"train_cpu_s": 3.0, "train_cpu_window_s": 1.0}  # 300% on 2 cores
    r = build_result(Trial(steps=4, batch_size=2, cores=(0, 1)), "t", recorded, None, {})
    assert r.cpu.process_pct is None and "more than 2 cores allow" in " ".join(r.measurement_notes or [])


def test_a_command_workloads_throughput_needs_its_own_batch_size():
    """Seen: a --command workload's samples/s computed from edgebench's default batch of 32."""
    unknown = build_result(Trial(command="./train", step_pattern="step"), "t", events(None), None, {})
    assert unknown.latency.throughput_sps is None and "--batch-size" in " ".join(unknown.measurement_notes)
    given = build_result(Trial(command="./train", step_pattern="step", batch_size=2), "t", events(None), None, {})
    assert given.latency.throughput_sps == pytest.approx(2 / 0.100)
    printed = build_result(Trial(command="./train", step_pattern="step"), "t", events(None), None, {"batch_size": 8})
    assert printed.latency.throughput_sps == pytest.approx(8 / 0.100)  # the demo's own "batch size 8" line


def test_one_printed_mean_gives_no_spread():
    """Seen: --step-pattern mnn-train-demo printing `± 0.00, cv 0.0%` from one mean made into 4 equal steps."""
    r = build_result(Trial(command="./demo", step_pattern="mnn-train-demo"), "t", events(None), None,
                     {"step_times": "mean only"})  # fmt: skip
    s = r.latency.step_ms
    assert (s.mean, s.n) == (pytest.approx(100.0), 4)
    assert s.std is None and s.cv is None and s.ci95 is None and s.median is None and r.predictability is None
