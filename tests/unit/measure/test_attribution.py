"""Attribution on hand-built spans and samples whose answers are known by hand."""

import math

import numpy as np
import pytest

from edgebench.measure.attribution import (
    PowerSeries,
    Segments,
    clip,
    exclusive_segments,
    power_from_samples,
    split,
    table_segments,
    time_by_key,
    trace_summary,
    window_total,
)
from edgebench.measure.layers import layer_report
from edgebench.measure.roofline import roofline_point
from edgebench.records.result import MeasuredEnergy, RailEnergy, TrialResult, stored_trial
from edgebench.records.sampling import SamplerMeta
from edgebench.records.spans import BACKWARD, FORWARD, SpanTable, span_table
from edgebench.sensors.base import PowerChannel
from edgebench.sensors.samples import Samples

MS = 1_000_000


def segs(result: Segments) -> list[tuple[int, int, int]]:
    return sorted(zip(result.start_ns.tolist(), result.end_ns.tolist(), result.key.tolist(), strict=True))


def test_exclusive_segments_give_the_innermost_span_each_instant():
    # parent 0-10 with children 2-4 and 6-9; child 6-9 has a grandchild 7-8
    start = np.array([0, 2, 6, 7])
    end = np.array([10, 4, 9, 8])
    key = np.array([0, 1, 2, 3])
    assert segs(exclusive_segments(start, end, key)) == [
        (0, 2, 0), (2, 4, 1), (4, 6, 0), (6, 7, 2), (7, 8, 3), (8, 9, 2), (9, 10, 0),
    ]  # fmt: skip


def test_exclusive_segments_leave_gaps_and_handle_shared_edges():
    # two top-level spans with a gap, a child starting with its parent and one ending with it
    start = np.array([0, 0, 5, 20])
    end = np.array([10, 5, 10, 30])
    key = np.array([0, 1, 2, 3])
    assert segs(exclusive_segments(start, end, key)) == [(0, 5, 1), (5, 10, 2), (20, 30, 3)]


def test_a_child_overlapping_its_parents_end_is_clipped_not_double_counted():
    result = exclusive_segments(np.array([0, 5]), np.array([10, 15]), np.array([0, 1]))
    assert segs(result) == [(0, 5, 0), (5, 10, 1)]
    assert result.duration_ns.sum() == 10


def test_split_spreads_each_interval_evenly_over_the_layers_in_it():
    # samples every 10 ms; the quantity grows 10 in the 1st interval, 0 in the 2nd, 30 in the 3rd
    t = np.array([0, 10, 20, 30]) * MS
    cumulative = np.array([0.0, 10.0, 10.0, 40.0])
    # key 0 runs 5-15 ms (half of interval 1, half of 2), key 1 runs 15-30 ms
    s = Segments(np.array([5, 15]) * MS, np.array([15, 30]) * MS, np.array([0, 1]))
    per_key = split(s, 2, t, cumulative)
    assert per_key == pytest.approx([5.0, 30.0])
    assert window_total([(0, 30 * MS)], t, cumulative) == pytest.approx(40.0)


def test_split_ignores_what_lies_outside_the_sampled_span():
    t = np.array([0, 10]) * MS
    s = Segments(np.array([20 * MS]), np.array([30 * MS]), np.array([0]))
    assert split(s, 1, t, np.array([0.0, 1.0])).tolist() == [0.0]


def test_power_becomes_energy_by_trapezoid_and_nan_is_skipped():
    power = PowerSeries(np.array([0, 1, 2, 3]) * 1_000_000_000, np.array([2.0, 4.0, math.nan, 4.0]), "p")
    # 0-1 s: (2+4)/2 = 3 J; 1-3 s (the NaN reading skipped): 4 W * 2 s = 8 J
    cumulative = power.cumulative_j()
    assert cumulative[[0, 1, 3]] == pytest.approx([0.0, 3.0, 11.0])
    assert math.isnan(cumulative[2])


VDD_IN = PowerChannel("VDD_IN", "jetson_power", "total", power_column="vdd_in_power_mw")
CPU_RAIL = PowerChannel("VDD_SYS_CPU", "jetson_power", "sub", power_column="vdd_sys_cpu_power_mw")
PACKAGE = PowerChannel("package-0", "rapl", "part", energy_column="pkg_energy_uj")
DRAM = PowerChannel("dram", "rapl", "part", energy_column="dram_energy_uj")


def samples_with(columns: dict[str, list[float]], period_ms: int = 10, channels: tuple = ()) -> Samples:
    n = len(next(iter(columns.values())))
    t = np.arange(n, dtype=np.int64) * period_ms * MS
    meta = SamplerMeta(interval_ms=period_ms, columns=list(columns), sensors=[], unavailable={},
                       power_channels=[c.__dict__ for c in channels])  # fmt: skip
    return Samples(t, {k: np.asarray(v, dtype=np.float64) for k, v in columns.items()}, meta)


def test_power_channel_choice():
    jetson = samples_with({"vdd_in_power_mw": [5000.0, 6000.0], "vdd_sys_cpu_power_mw": [1000.0, 2000.0]},
                          channels=(VDD_IN, CPU_RAIL))  # fmt: skip
    total = power_from_samples(jetson)
    assert "VDD_IN" in total.source and total.watts.tolist() == [5.0, 6.0]  # the total rail, not total + its part
    assert power_from_samples(jetson, "VDD_SYS_CPU").watts.tolist() == [1.0, 2.0]
    assert power_from_samples(jetson, "vdd_sys_cpu_power_mw").source == "jetson_power: VDD_SYS_CPU"  # by column
    # no total: RAPL's package and DRAM counters add up; 1 ms apart, 10 mJ and 2 mJ per interval -> 10 W + 2 W
    rapl = samples_with({"pkg_energy_uj": [0.0, 1e4, 2e4], "dram_energy_uj": [0.0, 2e3, 4e3]}, period_ms=1,
                        channels=(PACKAGE, DRAM))  # fmt: skip
    assert power_from_samples(rapl).watts.tolist() == pytest.approx([12.0, 12.0])
    assert power_from_samples(samples_with({"cpu0_active_ticks": [0.0, 1.0]})) is None  # no power sensor
    with pytest.raises(KeyError):
        power_from_samples(jetson, "VDD_NOPE")


# A two-step trial by hand.  Steps: 0-40 ms and 40-80 ms.  Model "Net" (label 0) with children "conv"
# (label 1) and "relu" (label 2).  Each step: Net forward 0-10 (conv 0-6, relu 6-8), Net backward 12-36
# (relu 12-16, conv 16-34).  So per step: conv fwd 6 + bwd 18 ms, relu 2 + 4, Net's own 2 + 2, other 6.
def spans_by_hand() -> SpanTable:
    rows = []
    for step in (0, 40):
        rows += [
            (0, FORWARD, step + 0, step + 10),
            (1, FORWARD, step + 0, step + 6),
            (2, FORWARD, step + 6, step + 8),
            (0, BACKWARD, step + 12, step + 36),
            (2, BACKWARD, step + 12, step + 16),
            (1, BACKWARD, step + 16, step + 34),
        ]
    costs = {
        "forward_flops": np.array([0.0, 6e6, 0.0]),
        "backward_flops": np.array([0.0, 12e6, 0.0]),
        "forward_bytes": np.array([0.0, 1e6, 4e6]),
        "backward_bytes": np.array([0.0, 2e6, 8e6]),
    }
    return span_table(
        "layers", ["Net", "conv", "relu"], ["Net", "Conv2d", "ReLU"], [-1, 0, 0],
        [(lab, kind, a * MS, b * MS, 7) for lab, kind, a, b in rows], costs=costs,
    )  # fmt: skip


EVENTS = [
    {"event": "ready", "pid": 7},
    {"event": "step", "phase": "warmup", "index": 0, "start_ns": -50 * MS, "end_ns": -10 * MS, "loss": 1.0},
    {"event": "step", "phase": "train", "index": 0, "start_ns": 0, "end_ns": 40 * MS, "loss": 1.0},
    {"event": "step", "phase": "train", "index": 1, "start_ns": 40 * MS, "end_ns": 80 * MS, "loss": 0.9},
    {"event": "done"},
]


def hand_samples() -> Samples:
    # 9 samples, every 10 ms from 0 to 80 ms.  cpu0 is busy throughout (1 tick per interval) with another process's
    # work; cpu1 is busy in the first half of each step (0-20 ms, 40-60 ms) with the worker's, idle in the second
    # half.  The worker's own ticks grow as cpu1's.  Power: 10 W throughout.
    cpu0_active = np.arange(9, dtype=float)
    cpu1_busy = np.array([1, 1, 0, 0, 1, 1, 0, 0], dtype=float)
    cpu1_active = np.concatenate([[0.0], np.cumsum(cpu1_busy)])
    cpu1_idle = np.concatenate([[0.0], np.cumsum(1 - cpu1_busy)])
    return samples_with({
        "cpu0_active_ticks": cpu0_active.tolist(), "cpu0_idle_ticks": [0.0] * 9,
        "cpu1_active_ticks": cpu1_active.tolist(), "cpu1_idle_ticks": cpu1_idle.tolist(),
        "proc_utime_ticks": cpu1_active.tolist(), "proc_stime_ticks": [0.0] * 9,
        "vdd_in_power_mw": [10_000.0] * 9,
    }, channels=(VDD_IN,))  # fmt: skip


def result_by_hand() -> TrialResult:
    trial = stored_trial({"model": "net", "batch_size": 4, "threads": 2, "cores": [0, 1], "steps": 2, "warmup": 1})
    return TrialResult(trial_id="t1", status="ok", trial=trial)


def test_trace_summary_counts_coverage_of_the_measured_steps():
    summary = trace_summary(spans_by_hand(), EVENTS)
    assert (summary.spans, summary.labels) == (12, 3)
    assert summary.covered_pct == pytest.approx(100 * (10 + 24) / 40)


def test_layer_table_times_and_shares():
    report = layer_report(result_by_hand(), spans_by_hand(), EVENTS, hand_samples(), depth=None)
    rows = {r.name: r for r in report.rows}
    assert report.steps == 2 and report.step_ms == pytest.approx(40.0)
    assert (rows["conv"].forward_ms, rows["conv"].backward_ms) == pytest.approx((6.0, 18.0))
    assert (rows["relu"].forward_ms, rows["relu"].backward_ms) == pytest.approx((2.0, 4.0))
    assert (rows["Net"].forward_ms, rows["Net"].backward_ms) == pytest.approx((2.0, 2.0))  # 8-10 and 34-36: its own
    assert rows["conv"].share_pct == pytest.approx(60.0)
    assert report.other.total_ms == pytest.approx(6.0)
    assert sum(r.total_ms for r in report.rows) + report.other.total_ms == pytest.approx(40.0)
    assert rows["conv"].calls_per_step == 1.0


def test_layer_cpu_utilization_and_energy_from_the_intervals_they_ran_in():
    report = layer_report(result_by_hand(), spans_by_hand(), EVENTS, hand_samples(), power=power_from_samples(
        hand_samples()))  # fmt: skip
    rows = {r.name: r for r in report.rows}
    # The worker's own CPU time, never the cores' total (cpu0 is another process's, busy throughout: counted, it
    # put every layer at 50% or more, as `cpu % 100` on every layer on a busy machine).  conv runs 0-6 and 16-34
    # in a step: the worker ran in 0-6 and 16-20 (10 of its 24 ms), on one of the two cores -> 10 / 48
    assert rows["conv"].cpu_util_pct == pytest.approx(100 * 10 / 48)
    assert rows["conv"].cpu_ms == pytest.approx(10.0)  # the worker's core-ms per step
    # relu runs 6-8 and 12-16: the worker ran throughout, on one core of two -> 50%
    assert rows["relu"].cpu_util_pct == pytest.approx(50.0)
    # other is 10-12 (the worker ran) and 36-40 (it did not): 2 / (6 x 2)
    assert report.other.cpu_util_pct == pytest.approx(100 * 2 / 12)
    assert any(n.startswith("CPU per layer: the worker's own CPU time") for n in report.notes)
    # 10 W: energy = 10 W x exclusive time
    assert rows["conv"].energy_j == pytest.approx(10 * 0.024)
    assert rows["conv"].power_w == pytest.approx(10.0)
    assert report.step_energy_j == pytest.approx(10 * 0.040)
    assert sum(r.energy_j for r in report.rows) + report.other.energy_j == pytest.approx(report.step_energy_j)
    assert report.power_source == "jetson_power: VDD_IN (power samples)"


def test_no_power_means_no_energy_not_zero():
    report = layer_report(result_by_hand(), spans_by_hand(), EVENTS, hand_samples())
    assert all(r.energy_j is None for r in report.rows) and report.other.energy_j is None
    assert report.step_energy_j is None and any("no power sensor" in n for n in report.notes)


def test_flops_roofline_and_share_of_peak():
    peak = {"key": "k", "gemm_gflops": 10.0, "copy_gbps": 1.0, "measured_at": "now"}
    report = layer_report(result_by_hand(), spans_by_hand(), EVENTS, None, peak=peak)
    conv = next(r for r in report.rows if r.name == "conv")
    assert conv.flops == pytest.approx(18e6) and conv.bytes == pytest.approx(3e6)
    assert conv.achieved_gflops == pytest.approx(18e6 / 0.024 / 1e9)  # 0.75 GFLOP/s
    assert conv.peak_pct == pytest.approx(7.5)
    assert conv.intensity_flop_per_byte == pytest.approx(6.0)  # below the ridge (10 FLOP/B): memory-bound
    assert conv.bound == "memory" and conv.attainable_gflops == pytest.approx(6.0)
    relu = next(r for r in report.rows if r.name == "relu")
    assert relu.flops == 0 and relu.achieved_gflops is None and relu.bound == "memory"
    assert relu.roof_pct == pytest.approx(100 * (12e6 / 0.006 / 1e9) / 1.0)
    assert conv.cpu_util_pct is None  # no samples


def test_depth_folds_children_into_their_ancestor():
    report = layer_report(result_by_hand(), spans_by_hand(), EVENTS, hand_samples(), depth=0)
    (net,) = report.rows
    assert net.name == "Net" and net.total_ms == pytest.approx(34.0)
    assert net.flops == pytest.approx(18e6)


def test_roofline_point_compute_bound_and_missing_inputs():
    p = roofline_point(flops=100e9, bytes_moved=1e9, seconds=2.0, gemm_gflops=80.0, copy_gbps=4.0)
    assert p.intensity_flop_per_byte == 100 and p.bound == "compute"
    assert p.attainable_gflops == 80.0 and p.achieved_gflops == 50.0 and p.roof_pct == pytest.approx(62.5)
    assert roofline_point(None, None, 1.0, 80.0, 4.0).bound is None
    assert roofline_point(1e9, 1e9, 1.0, None, None).peak_pct is None


def test_table_segments_keeps_threads_apart_and_clip_keeps_windows():
    table = span_table("ops", ["a", "b"], ["op", "op"], [-1, -1],
                       [(0, FORWARD, 0, 10, 1), (1, FORWARD, 5, 15, 2)])  # fmt: skip
    s = table_segments(table)
    assert time_by_key(s, 8)[[0, 4]].tolist() == [10.0, 10.0]  # overlapping, but on different threads
    inside = clip(s, [(0, 6), (12, 20)])
    assert sorted(inside.duration_ns.tolist()) == [1, 3, 6]


def test_layer_energies_are_on_the_trials_basis_above_idle_and_add_up_to_it():
    """Seen: layer rows summing to 0.497 J a step (gross) beside the trial's 0.152 J (idle subtracted)."""
    idle = MeasuredEnergy(idle_power_w=4.0, per_step_j=6 * 0.040, by_rail={"VDD_IN": RailEnergy(
        energy_j=0.48, gross_energy_j=0.8, avg_power_w=10.0, idle_power_w=4.0)})  # fmt: skip
    result = result_by_hand().model_copy(update={"energy": idle})
    report = layer_report(result, spans_by_hand(), EVENTS, hand_samples(), power=power_from_samples(hand_samples()))
    rows = {r.name: r for r in report.rows}
    assert report.energy_basis == "above idle" and report.idle_power_w == 4.0
    assert rows["conv"].energy_j == pytest.approx((10 - 4) * 0.024)  # 6 W above idle x 24 ms
    assert report.step_energy_j == pytest.approx(result.energy.per_step_j)
    assert sum(r.energy_j for r in report.rows) + report.other.energy_j == pytest.approx(result.energy.per_step_j)
    assert report.gross_step_energy_j == pytest.approx(10 * 0.040)
    by_channel = layer_report(result, spans_by_hand(), EVENTS, hand_samples(),
                              power=power_from_samples(hand_samples(), "VDD_IN"))  # fmt: skip
    assert by_channel.idle_power_w == 4.0  # the rail's own baseline
    gross = layer_report(result_by_hand(), spans_by_hand(), EVENTS, hand_samples(), power=power_from_samples(
        hand_samples()))  # fmt: skip
    assert gross.energy_basis == "gross" and any("gross" in n for n in gross.notes)


def test_the_layers_table_warns_of_a_busy_peak():
    peak = {"key": "k", "gemm_gflops": 10.0, "copy_gbps": 1.0, "measured_at": "now", "busy": "device busy: x"}
    report = layer_report(result_by_hand(), spans_by_hand(), EVENTS, None, peak=peak)
    assert report.peak.busy == "device busy: x"
    assert any(n.startswith("warning: the peak was measured on a busy device") for n in report.notes)
    quiet = layer_report(result_by_hand(), spans_by_hand(), EVENTS, None, peak={**peak, "busy": None})
    assert not any("busy device" in n for n in quiet.notes)
