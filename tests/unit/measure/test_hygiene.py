"""Measurement hygiene: other load on the trial's cores, bimodal or unstable steps, a moving clock; one warning line.

The end-to-end test runs the same real trial with and without a busy-loop child on its core, in the same test, so
a loaded 2-core machine moves both alike; the threshold (20% of the core) is generous.
"""

from __future__ import annotations

import numpy as np
import pytest

from edgebench.measure.hygiene import hygiene, modes, other_cpu_pct
from edgebench.records.sampling import SamplerMeta
from edgebench.report.warnings import hygiene_warnings
from edgebench.sensors.samples import Samples

MS = 1_000_000


def samples(**columns) -> Samples:
    """One reading every 100 ms (USER_HZ ticks, clk_tck 100)."""
    n = len(next(iter(columns.values())))
    meta = SamplerMeta(interval_ms=100, columns=list(columns), sensors=[], unavailable={}, power_channels=[])
    return Samples(np.arange(n, dtype=np.int64) * 100 * MS, {k: np.asarray(v, float) for k, v in columns.items()}, meta)


def core0(active_per_interval: float, own_per_interval: float, n: int = 11, freq=None) -> Samples:
    cols = {
        "cpu0_active_ticks": np.arange(n) * active_per_interval,
        "cpu0_idle_ticks": np.arange(n) * (10 - active_per_interval),
        "proc_utime_ticks": np.arange(n) * own_per_interval,
        "proc_stime_ticks": np.zeros(n),
    }
    if freq is not None:
        cols["cpu0_freq_khz"] = freq
    return samples(**cols)


def test_other_load_is_the_cores_active_time_less_the_workers_own():
    busy = core0(active_per_interval=10, own_per_interval=5)  # the core always busy, the worker half of it
    assert other_cpu_pct(busy, [0], 0, 1000 * MS, 100) == pytest.approx(50.0)
    quiet = core0(active_per_interval=6, own_per_interval=6)
    assert other_cpu_pct(quiet, [0], 0, 1000 * MS, 100) == pytest.approx(0.0)
    assert other_cpu_pct(busy, [0], 0, 50 * MS, 100) is None  # shorter than the ticks resolve


def test_one_warning_line_for_a_busy_device_and_none_for_a_quiet_one():
    steady = np.full(20, 10.0) + np.linspace(0, 0.2, 20)
    busy = hygiene(steady, core0(10, 5), [0], 0, 1000 * MS)
    assert (
        busy.other_cpu_pct == pytest.approx(50.0)
        and busy.warning == "device busy: other processes used 50% of its cores"
    )
    quiet = hygiene(steady, core0(6, 6), [0], 0, 1000 * MS)
    assert quiet.other_cpu_pct == pytest.approx(0.0) and quiet.warning is None and quiet.step_cv < 0.01


def test_bimodal_steps_are_flagged_with_both_modes():
    """Seen: torch LeNet at 13.4 ms mean whose median was 0.22 ms (cv 176%)."""
    steps = np.array([0.22] * 12 + [33.0] * 8)
    assert modes(steps) == pytest.approx((0.22, 33.0))
    h = hygiene(steps, None, [], 0, 1)
    assert "two modes (near 0.22 and 33 ms)" in h.warning and h.step_cv > 1
    assert modes(np.array([10.0, 10.5, 11.0, 10.2, 9.8])) is None
    assert "unstable steps (cv" in hygiene(np.array([10.0, 14.0, 10.0, 15.0, 11.0]), None, [], 0, 1).warning


def test_a_moving_clock_is_flagged():
    moved = hygiene(np.full(5, 10.0), core0(6, 6, freq=[1_800_000] * 5 + [1_200_000] * 6), [0], 0, 1000 * MS)
    assert moved.clock_moved and "clock moved 1200-1800 MHz" in moved.warning
    still = hygiene(np.full(5, 10.0), core0(6, 6, freq=[1_800_000] * 11), [0], 0, 1000 * MS)
    assert still.clock_moved is False and still.warning is None


def test_every_table_prints_the_warning_line():
    from edgebench.records.result import Hygiene
    from tests.factories import result

    busy = Hygiene(other_cpu_pct=45.0, warning="device busy: other processes used 45% of its cores")
    flagged = result("20260104-000001-aaaa", [10.0, 11.0]).model_copy(update={"hygiene": busy})
    clean = result("20260104-000002-bbbb", [10.0, 10.1])
    line = "warning: trial 20260104-000001-aaaa: device busy: other processes used 45% of its cores"
    assert hygiene_warnings([flagged, clean]) == [line]
    from rich.console import Console

    from edgebench.report.summary import summary_table

    console = Console(record=True, width=200)
    console.print(summary_table(flagged))
    text = console.export_text()
    assert "warning" in text and "other processes used 45%" in text
