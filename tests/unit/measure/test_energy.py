"""Energy from power channels, choice of source, idle subtraction and the labelled estimate, on hand-built series."""

import math

import numpy as np
import pytest

from edgebench.measure.estimate import estimate_energy, parse_power_model
from edgebench.measure.power import (
    device_energy,
    integrate_power_j,
    power_series_w,
    window_energy_j,
)
from edgebench.measure.trial import build_result
from edgebench.records.sampling import SamplerMeta
from edgebench.records.trial import Trial
from edgebench.sensors.base import PowerChannel
from edgebench.sensors.samples import Samples

S = 1_000_000_000


def samples_of(t_s, channels: list[PowerChannel], **columns) -> Samples:
    meta = SamplerMeta(
        interval_ms=1000.0,
        columns=list(columns),
        sensors=[],
        unavailable={},
        power_channels=[c.__dict__ for c in channels],
    )
    t = (np.asarray(t_s, dtype=np.float64) * S).astype(np.int64)
    return Samples(t, {k: np.asarray(v, dtype=np.float64) for k, v in columns.items()}, meta)


def cumulative_uj(watts_per_second):
    """A counter's readings at 0, 1, 2 ... s for the given power in each second."""
    return np.concatenate(([0.0], np.cumsum(np.asarray(watts_per_second, dtype=np.float64) * 1e6)))


PACKAGE = PowerChannel("package-0", "rapl", "part", energy_column="pkg_energy_uj")
DRAM = PowerChannel("dram", "rapl", "part", energy_column="dram_energy_uj")
CORE = PowerChannel("core", "rapl", "sub", energy_column="core_energy_uj")
PSYS = PowerChannel("psys", "rapl", "total", energy_column="psys_energy_uj")
VDD_IN = PowerChannel("VDD_IN", "jetson_power", "total", power_column="vdd_in_power_mw")
BATTERY = PowerChannel("device", "power_supply", "total", power_column="device_power_mw")


def laptop(with_psys=True):
    # 2 s idle at 4 W, then 8 s of training at 10 W (package); DRAM 1 W then 2 W; cores 2 W then 7 W.
    pkg = [4, 4] + [10] * 8
    channels = [PACKAGE, DRAM, CORE] + ([PSYS] if with_psys else [])
    columns = {
        "pkg_energy_uj": cumulative_uj(pkg),
        "dram_energy_uj": cumulative_uj([1, 1] + [2] * 8),
        "core_energy_uj": cumulative_uj([2, 2] + [7] * 8),
    }
    if with_psys:
        columns["psys_energy_uj"] = cumulative_uj([9, 9] + [20] * 8)
    return samples_of(range(11), channels, **columns)


def test_counter_energy_is_interpolated_to_the_window_edges():
    s = laptop()
    assert window_energy_j(s, PACKAGE, int(2.5 * S), int(7.5 * S)) == pytest.approx(50.0)
    assert window_energy_j(s, PACKAGE, int(1.5 * S), int(2.5 * S)) == pytest.approx(4 * 0.5 + 10 * 0.5)
    assert math.isnan(window_energy_j(s, PACKAGE, -S, S))  # before the first reading


def test_power_series_from_a_counter_and_from_power_readings():
    t, watts = power_series_w(laptop(), PACKAGE)
    assert t.tolist() == [i * S for i in range(1, 11)] and watts.tolist() == [4, 4] + [10] * 8
    s = samples_of([0, 1, 2], [VDD_IN], vdd_in_power_mw=[1000, 3000, np.nan])
    t, watts = power_series_w(s, VDD_IN)
    assert t.tolist() == [0, S] and watts.tolist() == [1.0, 3.0]


def test_power_readings_integrate_by_trapezoid_with_interpolated_edges():
    t = np.array([0, 1, 2, 3]) * S
    p = np.array([1.0, 3.0, 3.0, 1.0])
    assert integrate_power_j(t, p, 0, 3 * S) == pytest.approx(2 + 3 + 2)
    assert integrate_power_j(t, p, S // 2, S) == pytest.approx((2 + 3) / 2 * 0.5)
    # a window shorter than the polling period, between two readings
    assert integrate_power_j(t, p, int(1.2 * S), int(1.4 * S)) == pytest.approx(0.6)
    assert math.isnan(integrate_power_j(t, np.full(4, np.nan), 0, S))


def test_a_whole_device_total_wins_over_parts_and_idle_is_subtracted():
    figures = device_energy(laptop(), 2 * S, 10 * S, idle=(0, 2 * S))
    assert figures.channels == ("psys",)
    assert figures.source == "rapl: psys (energy counter)"
    assert figures.gross_j == pytest.approx(160.0)
    assert figures.idle_power_w == pytest.approx(9.0)
    assert figures.active_j == pytest.approx(160.0 - 9.0 * 8)  # E = T * (P_active - P_idle)
    assert figures.avg_power_w == pytest.approx(20.0)
    assert figures.rails["core"].active_j == pytest.approx(8 * (7 - 2))
    assert set(figures.rails) == {"package-0", "dram", "core", "psys"}


def test_without_a_total_the_parts_add_up_and_subs_do_not():
    figures = device_energy(laptop(with_psys=False), 2 * S, 10 * S, idle=(0, 2 * S))
    assert figures.channels == ("package-0", "dram")
    assert figures.gross_j == pytest.approx(8 * (10 + 2))
    assert figures.idle_power_w == pytest.approx(4 + 1)
    assert figures.active_j == pytest.approx(8 * (10 + 2) - 8 * 5)


def test_no_idle_window_means_gross_energy():
    figures = device_energy(laptop(), 2 * S, 10 * S)
    assert figures.idle_power_w is None and figures.active_j == figures.gross_j


def test_counters_beat_power_readings_among_totals():
    s = samples_of(
        range(4),
        [BATTERY, PSYS],
        device_power_mw=[15000] * 4,
        psys_energy_uj=cumulative_uj([20, 20, 20]),
    )
    assert device_energy(s, 0, 3 * S).channels == ("psys",)
    # without readings in the window the counter cannot be used, and the battery total is
    s.columns["psys_energy_uj"][:] = np.nan
    figures = device_energy(s, 0, 3 * S)
    assert figures.source == "power_supply: device (power samples)" and figures.gross_j == pytest.approx(45.0)


def test_no_power_channel_means_no_figures():
    assert device_energy(samples_of(range(3), [], cpu0_active_ticks=[0, 1, 2]), 0, 2 * S) is None
    only_sub = samples_of(range(3), [CORE], core_energy_uj=cumulative_uj([1, 1]))
    assert device_energy(only_sub, 0, 2 * S) is None


def test_charging_and_a_misleading_idle_window_are_noted():
    s = samples_of(
        range(4),
        [BATTERY],
        device_power_mw=[5000, 5000, 1000, 1000],
        external_power_online=[0, 0, 1, 1],
    )
    notes = device_energy(s, 2 * S, 3 * S, idle=(0, S)).notes
    assert any("external power" in n for n in notes)
    assert any("less power than the idle baseline" in n for n in notes)


def test_power_model_parses_and_rejects_with_the_fix():
    model = parse_power_model("idle=2.7W, max=6400mW,gpu=10w")
    assert (model.idle_w, model.max_w, model.gpu_w) == (2.7, 6.4, 10.0)
    assert parse_power_model(model.spec()) == model
    assert model.describe() == "linear-utilization: P = 2.7 W + (6.4 W - 2.7 W) * U_cpu + 10 W * U_gpu"
    for bad in ("", "idle=2W", "idle=2W,max=fast", "idle=5W,max=2W", "watts=3"):
        with pytest.raises(ValueError, match=r"idle|max|coefficient"):
            parse_power_model(bad)


def test_estimate_is_energy_above_idle():
    estimate = estimate_energy(parse_power_model("idle=2W,max=10W,gpu=20W"), 50.0, 4.0, gpu_util_pct=25.0)
    assert estimate.avg_power_w == pytest.approx(2 + 8 * 0.5 + 20 * 0.25)
    assert estimate.active_j == pytest.approx((8 * 0.5 + 20 * 0.25) * 4)
    assert estimate.idle_power_w == 2.0


# --------------------------------------------------------------------------- a whole trial result


def trial_events(steps=4):
    events = [
        {"event": "ready", "params": 1, "input_shape": [1, 28, 28], "num_classes": 10, "env": {}},
        {"event": "idle", "start_ns": 0, "end_ns": 2 * S, "seconds": 2.0},
    ]
    for i in range(steps):  # 2 s per step from t = 2 s
        start = (2 + 2 * i) * S
        events.append({"event": "step", "phase": "train", "index": i, "start_ns": start, "end_ns": start + 2 * S,
                       "loss": 1.0})  # fmt: skip
    events.append({"event": "done", "stopped_by": f"fixed: {steps} steps"})
    return events


def busy_cpu_columns():
    # one core, idle for the first 2 s (1 tick of 100 active), then 50% busy
    active = np.array([0, 1, 2] + [2 + 50 * k for k in range(1, 9)], dtype=np.float64)
    idle = np.array([0, 99, 198] + [198 + 50 * k for k in range(1, 9)], dtype=np.float64)
    return {"cpu0_active_ticks": active, "cpu0_idle_ticks": idle}


def test_trial_result_has_measured_energy_per_step_and_sample():
    trial = Trial(batch_size=8, steps=4, warmup=0)
    s = laptop()
    s.columns.update(busy_cpu_columns())
    r = build_result(trial, "t1", trial_events(), s, {})
    assert r.energy.source == "rapl: psys (energy counter)"
    assert r.energy.gross_j == pytest.approx(160.0) and r.energy.window_s == pytest.approx(8.0)
    assert r.energy.idle_power_w == pytest.approx(9.0) and r.energy.idle_window_s == pytest.approx(2.0)
    assert r.energy.energy_j == pytest.approx(88.0)
    assert r.energy.per_step_j == pytest.approx(22.0)
    assert r.energy.per_sample_j == pytest.approx(88.0 / 32)
    assert r.energy.avg_power_w == pytest.approx(20.0)
    assert r.energy.by_rail["package-0"].idle_power_w == pytest.approx(4.0)
    assert r.estimated_energy is None  # not asked for


def worker_events(cpu_s: float, window_s: float = 8.0) -> list[dict]:
    """The trial's events with the worker's own CPU time over its measured window (its rusage)."""
    events = trial_events()
    events[-1] = {**events[-1], "train_cpu_s": cpu_s, "train_cpu_window_s": window_s}
    return events


def test_estimate_is_labelled_and_never_in_energy_j():
    trial = Trial(batch_size=8, steps=4, warmup=0, estimate_energy="idle=2W,max=10W")
    cpu_only = samples_of(range(11), [], **busy_cpu_columns())
    r = build_result(trial, "t2", worker_events(4.0), cpu_only, {})  # the worker: half of the one core
    assert r.energy.energy_j is None and r.energy.per_step_j is None
    assert r.cpu.util_pct.mean == pytest.approx(50.0)
    assert r.estimated_energy.cpu_util_pct == pytest.approx(50.0)
    assert r.estimated_energy.energy_j == pytest.approx(8 * 0.5 * 8)
    assert r.estimated_energy.avg_power_w == pytest.approx(6.0)
    assert (
        r.energy.source is None  # an estimate is never a measurement's source
        and r.estimated_energy.source == "estimated: linear-utilization: P = 2 W + (10 W - 2 W) * U_cpu"
    )
    # with a power sensor too, the measured figure keeps energy_j and its source; the estimate sits beside it
    s = laptop()
    s.columns.update(busy_cpu_columns())
    r = build_result(trial, "t3", worker_events(4.0), s, {})
    assert r.energy.source == "rapl: psys (energy counter)" and r.energy.energy_j == pytest.approx(88.0)
    assert r.estimated_energy.source.startswith("estimated: ")


def test_the_estimate_charges_the_trial_its_workers_cpu_not_the_neighbours():
    """Recorded: `partition --table4 --objective energy` showed a 53.8% saving from an estimate whose U_cpu was the
    cores' total, other processes' load included (power at the max=25W given, the worker at 65% of one core)."""
    trial = Trial(batch_size=8, steps=4, warmup=0, estimate_energy="idle=2W,max=25W")
    busy = samples_of(range(11), [], **{f"cpu{c}_{k}_ticks": np.arange(11.0) * (100 if k == "active" else 0)
                                        for c in (0, 1) for k in ("active", "idle")})  # fmt: skip
    r = build_result(trial, "t6", worker_events(0.65 * 8.0), busy, {"cpu_count": 2})
    assert r.cpu.util_pct.mean == pytest.approx(100.0)  # the cores: every process's load
    assert r.cpu.process_pct == pytest.approx(65.0)
    assert r.estimated_energy.cpu_util_pct == pytest.approx(65.0 / 2)  # the worker's share of the two cores
    assert r.estimated_energy.avg_power_w == pytest.approx(2 + 23 * 0.325)
    # no worker CPU time (withheld): no U_cpu to charge, so no estimate rather than the cores' total
    assert build_result(trial, "t7", trial_events(), busy, {"cpu_count": 2}).estimated_energy is None


def test_a_window_too_short_for_clock_ticks_estimates_from_the_process_cpu_time():
    # two cores whose /proc/stat ticks never move across the window (a few ms of inference at USER_HZ=100)
    frozen = {f"cpu{c}_{kind}_ticks": [7.0] * 11 for c in (0, 1) for kind in ("active", "idle")}
    trial = Trial(batch_size=8, steps=4, warmup=0, estimate_energy="idle=2W,max=10W")
    events = trial_events()
    events[-1] = {**events[-1], "train_cpu_s": 4.0, "train_cpu_window_s": 8.0}  # half of one core
    r = build_result(trial, "t4", events, samples_of(range(11), [], **frozen), {})
    assert r.cpu.util_pct.mean is None and r.cpu.process_pct == pytest.approx(50.0)
    assert r.estimated_energy.avg_power_w == pytest.approx(2 + 8 * 0.25)  # 50% of one core is 25% of the device
    assert r.estimated_energy.energy_j == pytest.approx(2.0 * 8)
    plain = build_result(Trial(batch_size=8, steps=4, warmup=0), "t5", events, samples_of(range(11), [], **frozen), {})
    assert plain.estimated_energy is None and not plain.measurement_notes  # no estimate asked for, no note


def test_gpu_utilization_is_the_mean_load_over_the_window():
    trial = Trial(batch_size=8, steps=4, warmup=0)
    s = samples_of(range(11), [], gpu0_load_permille=[0, 0] + [800] * 9, gpu1_util_pct=[np.nan] * 2 + [40] * 9)
    r = build_result(trial, "t4", trial_events(), s, {})
    assert r.gpu_util_pct.per_gpu == pytest.approx([80.0, 40.0])
    assert r.gpu_util_pct.mean == pytest.approx(60.0)


def test_estimate_uses_gpu_utilization_where_measured():
    trial = Trial(batch_size=8, steps=4, warmup=0, estimate_energy="idle=2W,max=10W,gpu=20W")
    s = samples_of(range(11), [], gpu0_util_pct=[0, 0] + [50] * 9, **busy_cpu_columns())
    r = build_result(trial, "t5", worker_events(4.0), s, {})
    assert r.estimated_energy.avg_power_w == pytest.approx(2 + 8 * 0.5 + 20 * 0.5)
