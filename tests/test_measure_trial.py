"""build_result on the edges: a trial without samples, or whose worker could not reset its memory high-water mark."""

import pytest

from edgebench.measure.trial import build_result
from edgebench.records.trial import Trial
from tests.conftest import json_out

MS = 1_000_000


def events(peak_bytes):
    steps = [
        {"event": "step", "phase": "train", "index": i, "start_ns": i * 10 * MS, "end_ns": (i + 1) * 10 * MS,
         "loss": 2.0 - i / 10}
        for i in range(4)
    ]  # fmt: skip
    done = {"event": "done", "stopped_by": "fixed: 4 steps", "train_cpu_s": 0.02, "train_peak_memory_bytes": peak_bytes}
    return [{"event": "ready", "params": 10, "env": {}}, *steps, done]


def test_without_samples_or_memory_peak_the_result_says_unknown():
    r = build_result(Trial(steps=4, batch_size=2), "t", events(None), None, {})
    assert r.ok and r.memory.peak_bytes is None and r.memory.peak_source is None
    assert r.cpu.process_pct == pytest.approx(50.0)  # 20 ms of CPU over a 40 ms window
    assert r.cpu.util_pct is None and r.energy.energy_j is None


def test_worker_peak_is_used_when_present():
    r = build_result(Trial(steps=4, batch_size=2), "t", events(123 * 2**20), None, {})
    assert (r.memory.peak_bytes, r.memory.peak_source) == (123 * 2**20, "vmhwm")
    assert r.latency.step_ms.n == 4 and r.latency.throughput_sps == pytest.approx(2 / 0.010)


def test_steps_shorter_than_the_clock_give_no_throughput():
    """A --command workload stamped on /proc/uptime (10 ms steps) can show steps of 0 ms: throughput unknown."""
    same_tick = [
        {**e, "end_ns": e["start_ns"]} if e["event"] == "step" else e for e in events(None)
    ]  # fmt: skip
    r = build_result(Trial(steps=4, batch_size=2), "t", same_tick, None, {})
    assert r.latency.step_ms.mean == 0 and r.latency.throughput_sps is None


def test_worker_cpu_is_read_over_the_window_its_cpu_time_covers():
    # 90 ms of CPU read over 50 ms of wall time on 2 cores: 180%.  Over the 40 ms the steps span it would read
    # 225%, more than two cores can give: the CPU readings start before the first step and end after the last.
    recorded = events(None)
    recorded[-1] |= {"train_cpu_s": 0.09, "train_cpu_window_s": 0.05}
    r = build_result(Trial(steps=4, batch_size=2, cores=(0, 1)), "t", recorded, None, {})
    assert r.cpu.process_pct == pytest.approx(180.0)
    assert r.cpu.process_pct <= 100 * len(r.trial.cores)


def test_worker_cpu_of_a_real_run_is_never_above_its_cores(cli):
    for _ in range(3):  # one-sample steps: the phases are short, where a wrong window shows most
        r = json_out(cli("run", "--steps", "1", "--warmup", "1", "--batch-size", "1", "--infer-steps", "1",
                         "--cores", "0x1", "--json", "--no-store"))  # fmt: skip
        assert 0 < r["cpu"]["process_pct"] <= 100 * len(r["trial"]["cores"]) * 1.02, r["cpu"]["process_pct"]
        assert 0 < r["cpu"]["infer_process_pct"] <= 100 * len(r["trial"]["cores"]) * 1.02, r["cpu"]["infer_process_pct"]
