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


def sched(on_cpu_s: float, wait_s: float, switches: int | None = None, threads: int = 1, window_s: float = 0.28):
    from edgebench.records.events import Scheduling

    return Scheduling(on_cpu_s=on_cpu_s, run_queue_wait_s=wait_s, involuntary_switches=switches, threads=threads,
                      window_s=window_s)  # fmt: skip


def test_the_run_queue_wait_flags_a_busy_device_over_a_window_too_short_for_the_ticks():
    """Recorded: a 10-step LeNet trial beside a busy loop on every core (0.28 s on two cores) said only `unstable
    steps`; the worker's scheduler counters say how long its threads waited for a CPU at any window's length."""
    steady = np.full(10, 15.0)
    short = 150 * MS  # one core's ticks resolve 0.2 s at the least
    busy = hygiene(steady, core0(10, 5), [0], 0, short, sched=sched(0.06, 0.09, switches=30, window_s=0.15),
                   threads=1)  # fmt: skip
    assert busy.other_cpu_pct is None
    assert busy.run_queue_wait_pct == pytest.approx(60.0)
    assert busy.involuntary_switches_per_s == pytest.approx(200.0)
    assert busy.warning == (
        "device busy: its threads waited for a CPU 60% of the time they were runnable (200 involuntary switches/s)"
    )
    assert busy.quiet_unknown is None
    quiet = hygiene(steady, core0(10, 5), [0], 0, short, sched=sched(0.146, 0.004, 1, window_s=0.15), threads=1)
    assert quiet.run_queue_wait_pct == pytest.approx(100 * 0.004 / 0.15) and quiet.warning is None


def test_a_few_milliseconds_of_waiting_on_a_very_short_window_is_not_called_busy():
    """Recorded: LiteRT and ExecuTorch 10-step trials of 7-20 ms on a quiet machine read 21-42% run-queue wait and
    were called "device busy": one wake-up behind a kernel thread or the sampler waits a scheduler slice (~3 ms),
    a third of such a window.  Under MIN_BUSY_WAIT_MS of waiting the counters cannot tell that from a neighbour: the
    trial says the window was too short to tell (still a failed check), not that the device was busy."""
    from edgebench.measure.hygiene import MIN_BUSY_WAIT_MS

    steps = np.full(10, 1.2)
    brief = hygiene(steps, core0(10, 5), [0], 0, 12 * MS, sched=sched(0.008, 0.004, 2, window_s=0.012), threads=1)
    assert brief.run_queue_wait_pct == pytest.approx(100 * 4 / 12) and brief.run_queue_wait_ms == pytest.approx(4.0)
    assert "device busy" not in brief.warning
    assert brief.quiet_unknown.startswith("window too short: its threads waited 4.0 ms for a CPU (33% of the time")
    assert f"under the {MIN_BUSY_WAIT_MS:g} ms" in brief.warning
    # the same share over a longer window adds up past the floor: a busy neighbour
    longer = hygiene(steps, core0(10, 5), [0], 0, 120 * MS, sched=sched(0.08, 0.04, 20, window_s=0.12), threads=1)
    assert longer.warning.startswith("device busy: its threads waited for a CPU 33%") and longer.quiet_unknown is None
    # a brief window with little waiting is quiet, as before
    quiet = hygiene(steps, core0(10, 5), [0], 0, 12 * MS, sched=sched(0.0119, 0.0001, 0, window_s=0.012), threads=1)
    assert quiet.warning is None
    # a record stored before the wait's length was kept is judged by its share alone
    from edgebench.measure.hygiene import busy_by_waiting
    from edgebench.records.result import Hygiene

    assert busy_by_waiting(Hygiene(run_queue_wait_pct=33.0), [0], 1)


def test_a_busy_device_by_ticks_and_by_waiting_is_one_device_busy_part():
    h = hygiene(np.full(20, 10.0), core0(10, 5), [0], 0, 1000 * MS, sched=sched(0.5, 0.5, 300, window_s=1.0))
    assert h.warning == (
        "device busy: other processes used 50% of its cores, its threads waited for a CPU 50% of the time they were "
        "runnable (300 involuntary switches/s)"
    )


def test_the_workers_own_threads_beyond_its_cores_are_not_another_processs_load():
    """Four threads on two cores wait half their runnable time for each other, whatever else runs."""
    own = hygiene(np.full(10, 10.0), None, [0, 1], 0, 280 * MS, sched=sched(0.4, 0.45, threads=4), threads=4)
    assert own.run_queue_wait_pct == pytest.approx(100 * 0.45 / 0.85) and "device busy" not in (own.warning or "")
    more = hygiene(np.full(10, 10.0), None, [0, 1], 0, 280 * MS, sched=sched(0.2, 0.8, threads=4), threads=4)
    assert "device busy: its threads waited for a CPU 80%" in more.warning


def test_involuntary_switches_decide_only_where_the_wait_is_unknown():
    from edgebench.measure.hygiene import Contention, busy_by_waiting
    from edgebench.records.result import Hygiene

    assert busy_by_waiting(Hygiene(involuntary_switches_per_s=400.0), [0], 1)
    assert not busy_by_waiting(Hygiene(involuntary_switches_per_s=20.0), [0], 1)
    assert not busy_by_waiting(Hygiene(run_queue_wait_pct=5.0, involuntary_switches_per_s=400.0), [0], 1)
    assert Contention(None, None).threads is None


def test_a_window_too_short_for_the_ticks_with_no_scheduler_counters_is_a_failed_check():
    h = hygiene(np.full(10, 5.0), core0(10, 5), [0], 0, 50 * MS)
    assert h.other_cpu_pct is None and h.run_queue_wait_pct is None
    assert h.quiet_unknown.startswith("window too short: 0.05 s of measured steps, under the 0.20 s")
    assert "nothing tells whether the device was quiet" in h.warning
    unsampled = hygiene(np.full(10, 5.0), None, [0], 0, 50 * MS)
    assert unsampled.quiet_unknown.startswith("no sampler ran and no scheduler counters were read")
    # the scheduler's counters tell it: no failure
    told = hygiene(np.full(10, 5.0), core0(10, 5), [0], 0, 50 * MS, sched=sched(0.05, 0.0, 0, window_s=0.05))
    assert told.quiet_unknown is None and told.warning is None


def test_a_command_workloads_sampled_schedstat_gives_its_wait_over_the_window():
    """The device-side samplers read /proc/<pid>/task/*/schedstat at every tick (summed over threads)."""
    n = 11
    s = samples(
        proc_on_cpu_ns=np.arange(n) * 40 * MS,  # 40 ms on a CPU per 100 ms interval
        proc_run_queue_wait_ns=np.arange(n) * 60 * MS,  # 60 ms waiting
    )
    h = hygiene(np.full(10, 10.0), s, [0], 0, 300 * MS)
    assert h.run_queue_wait_pct == pytest.approx(60.0) and h.involuntary_switches_per_s is None
    assert "device busy: its threads waited for a CPU 60%" in h.warning
