"""Thermal-throttling detection on hand-built series: busy, clocked down and hot, or not."""

import numpy as np
import pytest

from edgebench.measure.throttling import LoadWindow, ThrottleTracker, detect_throttling, load_windows, throttled
from edgebench.measure.trial import build_result, trial_throttling
from edgebench.records.throttle import PolicyLimit, ThrottleReference
from edgebench.records.trial import Trial
from edgebench.report.summary import throttling_text
from edgebench.sensors.samples import Samples

MS = 1_000_000
BIG = PolicyLimit("policy4", (2, 3), 2_400_000)
LITTLE = PolicyLimit("policy0", (0, 1), 1_800_000)


def series(seconds=10, step_ms=100, big_freq=None, temp_c=None, little_busy=False):
    """Cores 2-3 busy throughout; cores 0-1 idle unless ``little_busy``; per-tick frequency and temperature."""
    n = seconds * 1000 // step_ms + 1
    t = np.arange(n, dtype=np.int64) * step_ms * MS
    ticks = np.arange(n, dtype=np.float64) * step_ms / 10  # USER_HZ 100: 10 ticks per 100 ms
    columns = {}
    for core in range(4):
        busy = core >= 2 or little_busy
        columns[f"cpu{core}_active_ticks"] = ticks * (0.9 if busy else 0.0)
        columns[f"cpu{core}_idle_ticks"] = ticks * (0.1 if busy else 1.0)
    big = np.full(n, 2_400_000.0) if big_freq is None else big_freq(t / 1e9)
    for core in (2, 3):
        columns[f"cpu{core}_freq_khz"] = big
    for core in (0, 1):
        columns[f"cpu{core}_freq_khz"] = np.full(n, 600_000.0)  # low but idle: not throttling
    columns["temp_cpu_thermal_mc"] = (np.full(n, 60.0) if temp_c is None else temp_c(t / 1e9)) * 1000
    columns["temp_battery_mc"] = np.full(n, 30_000.0)
    return Samples(t, columns)


def dip(lo_s, hi_s, low=1_400_000.0, high=2_400_000.0):
    return lambda t: np.where((t >= lo_s) & (t < hi_s), low, high)


def test_clock_held_down_under_load_while_hot_is_one_episode():
    s = series(big_freq=dip(4, 7), temp_c=lambda t: np.where(t >= 3, 88.0, 60.0))
    (episode,) = detect_throttling(s, [LITTLE, BIG], hot_c=80.0)
    assert episode.policy == "policy4" and episode.cores == (2, 3)
    assert (episode.start_ns, episode.end_ns) == (4000 * MS, 7000 * MS)
    assert episode.duration_s == pytest.approx(3.0)
    assert episode.min_freq_khz == pytest.approx(1_400_000) and episode.max_khz == 2_400_000
    assert episode.max_temp_c == pytest.approx(88.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"big_freq": dip(4, 7), "temp_c": lambda t: np.full_like(t, 60.0)},  # clocked down but cool: a governor
        {"temp_c": lambda t: np.full_like(t, 95.0)},  # hot but at full clock
        {"big_freq": dip(4, 7, high=2_400_000.0, low=2_350_000.0), "temp_c": lambda t: np.full_like(t, 95.0)},
    ],
)
def test_not_throttling(kwargs):
    assert detect_throttling(series(**kwargs), [LITTLE, BIG], hot_c=80.0) == []


def test_idle_cores_at_a_low_clock_are_not_throttled_but_busy_ones_are():
    hot = {"temp_c": lambda t: np.full_like(t, 90.0)}
    assert [e.policy for e in detect_throttling(series(**hot), [LITTLE, BIG], 80.0)] == []
    episodes = detect_throttling(series(little_busy=True, **hot), [LITTLE, BIG], 80.0)
    assert [(e.policy, e.duration_s) for e in episodes] == [("policy0", pytest.approx(10.0))]


def test_windows_measure_utilization_from_ticks():
    ((first, *_),) = [load_windows(series(), 1.0)]
    assert first.util_pct[2] == pytest.approx(90.0) and first.util_pct[0] == pytest.approx(0.0)
    assert first.temp_c == pytest.approx(60.0)  # the hottest reading in the window


def test_tracker_fed_in_pieces_finds_what_the_whole_series_has_and_says_when():
    s = series(big_freq=dip(2, 4), temp_c=lambda t: np.full_like(t, 85.0))
    whole = detect_throttling(s, [LITTLE, BIG], 80.0)
    started, ended = [], []
    tracker = ThrottleTracker([LITTLE, BIG], 80.0, on_start=started.append, on_end=ended.append)
    for window in load_windows(s, 1.0):
        tracker.feed(window)
        if window.end_ns == 3000 * MS:
            assert [e.policy for e in started] == ["policy4"] and not ended  # reported while it lasts
    assert tracker.finish() == whole and len(ended) == 1


def test_missing_readings_do_not_count():
    window = LoadWindow(0, 1, {2: float("nan")}, {}, None)
    assert not throttled(window, BIG, 80.0)


def test_trial_throttling_covers_the_measured_steps_only():
    s = series(big_freq=dip(2, 4), temp_c=lambda t: np.full_like(t, 85.0))
    reference = ThrottleReference((LITTLE, BIG), 80.0)
    t = trial_throttling(s, 1000 * MS, 9000 * MS, reference)
    assert t is not None and t.hot_c == 80.0
    (episode,) = t.episodes
    assert (episode.policy, episode.cores, episode.reference_khz) == ("policy4", [2, 3], 2_400_000)
    assert episode.start_s == pytest.approx(1.0) and episode.duration_s == pytest.approx(2.0)  # 2-4 s, from 1 s
    assert t.throttled_s == pytest.approx(2.0)
    assert trial_throttling(s, 5000 * MS, 9000 * MS, reference).episodes == []  # after the dip: none


def test_throttled_time_counts_overlapping_policies_once():
    s = series(big_freq=dip(2, 6), temp_c=lambda t: np.full_like(t, 85.0), little_busy=True)
    for core in (0, 1):  # the little cluster held down from 4 s to 8 s
        s.columns[f"cpu{core}_freq_khz"] = dip(4, 8, low=900_000.0, high=1_800_000.0)(s.t_ns / 1e9)
    t = trial_throttling(s, 0, 10_000 * MS, ThrottleReference((LITTLE, BIG), 80.0))
    assert sorted((e.policy, e.duration_s) for e in t.episodes) == [
        ("policy0", pytest.approx(4.0)),
        ("policy4", pytest.approx(4.0)),
    ]
    assert t.throttled_s == pytest.approx(6.0)  # 2-8 s


def test_no_throttling_verdict_without_frequency_or_temperature():
    s = series()
    no_temp = Samples(s.t_ns, {k: v for k, v in s.columns.items() if not k.startswith("temp_")})
    no_freq = Samples(s.t_ns, {k: v for k, v in s.columns.items() if not k.endswith("_freq_khz")})
    reference = ThrottleReference((LITTLE, BIG), 80.0)
    assert trial_throttling(no_temp, 0, 10_000 * MS, reference) is None
    assert trial_throttling(no_freq, 0, 10_000 * MS, reference) is None
    assert trial_throttling(s, 0, 10_000 * MS, ThrottleReference((), 80.0)) is None


def test_a_trial_result_reports_throttling_and_its_summary_row():
    steps = [
        {"event": "step", "phase": "train", "index": i, "start_ns": (1 + i) * 1000 * MS, "end_ns": (2 + i) * 1000 * MS,
         "loss": 1.0}
        for i in range(8)
    ]  # fmt: skip
    events = [{"event": "ready", "params": 10, "env": {}}, *steps, {"event": "done", "stopped_by": "fixed: 8 steps"}]
    s = series(big_freq=dip(2, 4), temp_c=lambda t: np.full_like(t, 85.0))
    reference = ThrottleReference((LITTLE, BIG), 80.0)
    r = build_result(Trial(steps=8, batch_size=2), "t", events, s, {}, reference)
    assert [(e.policy, e.start_s, e.duration_s) for e in r.throttling.episodes] == [("policy4", 1.0, 2.0)]
    assert throttling_text(r.throttling) == "2.0 s: policy4 from 1.0 s for 2.0 s, down to 1400 of 2400 MHz at 85.0 °C"
    assert build_result(Trial(steps=8, batch_size=2), "t", events, s, {}).throttling is None  # no reference given
