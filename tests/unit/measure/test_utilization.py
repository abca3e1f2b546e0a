"""Equations 1-2 of the characterization paper and the idle-state ratio, on hand-built samples."""

import math

import numpy as np
import pytest

from edgebench.measure.utilization import (
    idle_ratio,
    mean_utilization_pct,
    per_core_utilization_pct,
    process_cpu_pct,
    read_span,
    value_at,
)
from edgebench.sensors.samples import Samples

MS = 1_000_000


def samples(**columns):
    t = np.arange(5, dtype=np.int64) * 10 * MS
    return Samples(t, {k: np.asarray(v, dtype=np.float64) for k, v in columns.items()})


SAMPLES = samples(
    cpu0_active_ticks=[0, 1, 2, 2, 3],
    cpu0_idle_ticks=[0, 0, 0, 1, 1],
    cpu1_active_ticks=[0, 0, 0, 0, 0],
    cpu1_idle_ticks=[0, 1, 2, 3, 4],
    # cpu2 sees no tick at all in the 1st and 3rd intervals
    cpu2_active_ticks=[0, 0, 1, 1, 1],
    cpu2_idle_ticks=[0, 0, 0, 0, 1],
    proc_utime_ticks=[0, 1, 2, 3, 3],
    proc_stime_ticks=[0, 0, 0, 0, 1],
)


def test_per_core_and_mean_over_the_whole_window():
    per_core = per_core_utilization_pct(SAMPLES, 0, 40 * MS)
    assert per_core == pytest.approx([75.0, 0.0, 50.0])
    assert mean_utilization_pct(per_core) == pytest.approx(125 / 3)


def test_window_edges_are_interpolated():
    # active 0.5 -> 2.5 and idle 0 -> 1 between 5 ms and 35 ms
    assert per_core_utilization_pct(SAMPLES, 5 * MS, 35 * MS)[0] == pytest.approx(200 / 3)


def test_idle_ratio_counts_only_intervals_that_ticked():
    assert idle_ratio(SAMPLES, 0, 40 * MS) == pytest.approx([0.25, 1.0, 0.5])


def test_idle_ratio_weights_partial_intervals():
    # window 15-40 ms: cpu0 intervals 2 (half inside, busy), 3 (idle), 4 (busy) -> 10 / 25
    assert idle_ratio(SAMPLES, 15 * MS, 40 * MS)[0] == pytest.approx(0.4)


def test_process_cpu_is_percent_of_one_core():
    assert process_cpu_pct(SAMPLES, 0, 40 * MS, clk_tck=100) == pytest.approx(100.0)


def test_a_process_read_until_it_exited_gives_its_share_over_the_part_of_the_window_it_was_read():
    """A --command workload exits right after its last step line: its counters, read every 50-100 ms, end up to a
    period before the window's end, and the share over the whole window was missing at random (tried: a local
    `run --command` stored no process CPU and no hygiene verdict in 3 of 3 runs)."""
    gone = samples(proc_utime_ticks=[0, 2, 4, math.nan, math.nan], proc_stime_ticks=[0, 0, 0, math.nan, math.nan])
    assert process_cpu_pct(gone, 0, 35 * MS, clk_tck=100) == pytest.approx(200.0)  # over 0-20 ms: 4 ticks
    assert read_span(gone.t_ns, gone.columns["proc_utime_ticks"], 0, 35 * MS) == (0, 20 * MS)
    assert read_span(gone.t_ns, gone.columns["proc_utime_ticks"], 0, 45 * MS) is None  # under half the window
    assert math.isnan(process_cpu_pct(gone, 0, 45 * MS, clk_tck=100))


def test_offline_core_reads_nan_and_is_left_out_of_the_mean():
    s = samples(
        cpu0_active_ticks=[0, 1, 2, 3, 4],
        cpu0_idle_ticks=[0, 0, 0, 0, 0],
        cpu1_active_ticks=[math.nan] * 5,
        cpu1_idle_ticks=[math.nan] * 5,
    )
    per_core = per_core_utilization_pct(s, 0, 40 * MS)
    assert per_core[0] == 100.0 and math.isnan(per_core[1])
    assert mean_utilization_pct(per_core) == 100.0


def test_value_outside_sampled_span_is_nan():
    assert math.isnan(value_at(SAMPLES.t_ns, SAMPLES.columns["cpu0_active_ticks"], 50 * MS))
