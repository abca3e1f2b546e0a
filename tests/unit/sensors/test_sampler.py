"""The sampler loop, its raw record format and its decoding, in-process and as a separate process."""

import io
import os
import threading
import time

import numpy as np
import pytest

from edgebench.sensors.sampler import Sampler, SamplerConfig, SamplerProcess
from edgebench.sensors.samples import parse_samples, read_samples


def run_for(sampler: Sampler, seconds: float) -> bytes:
    raw = io.BytesIO()
    threading.Timer(seconds, sampler.stop).start()
    sampler.run(raw)
    return raw.getvalue()


def test_fixture_tree_samples_decode_to_the_device_values(sysfs_tree, tmp_path):
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), interval_ms=5, sysfs_root=str(sysfs_tree("rpi4")), pid=4242)
    sampler = Sampler(config)
    assert sampler.meta.sensors == ["cpu_time", "process", "memory", "cpu_freq", "thermal", "process_memory"]
    assert set(sampler.meta.unavailable) == {"rapl", "jetson_power", "jetson_gpu", "power_supply", "odpm", "nvml"}
    raw = run_for(sampler, 0.1)
    csv = io.StringIO()
    rows = sampler.decode(io.BytesIO(raw), csv)
    sampler.close()
    assert rows == sampler.meta.samples >= 5
    samples = parse_samples(csv.getvalue(), sampler.meta)
    assert len(samples) == rows
    assert (samples.columns["cpu2_freq_khz"] == 1_500_000).all()
    assert (read(samples, "temp_cpu_thermal_mc") == 48_686).all()
    assert (read(samples, "mem_available_bytes") == 3412716 * 1024).all()
    assert (read(samples, "proc_rss_bytes") == 86213 * os.sysconf("SC_PAGE_SIZE")).all()
    assert (samples.t_ns[1:] > samples.t_ns[:-1]).all()


def read(samples, column):
    """The values a slow sensor actually read (the ticks it skipped are empty)."""
    values = samples.columns[column]
    values = values[~np.isnan(values)]
    assert len(values) > 0
    return values


def test_slow_sensors_are_polled_at_their_own_period(sysfs_tree, tmp_path):
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), interval_ms=10, sysfs_root=str(sysfs_tree("rpi4")))
    sampler = Sampler(config)
    raw = b"".join(sampler.poll() for _ in range(25))
    csv = io.StringIO()
    sampler.decode(io.BytesIO(raw), csv)
    samples = parse_samples(csv.getvalue())
    # memory and thermal declare 100 ms: ticks 0, 10 and 20 of 25 at 10 ms; cpu time and frequency every tick
    assert np.flatnonzero(~np.isnan(samples.columns["mem_available_bytes"])).tolist() == [0, 10, 20]
    assert np.flatnonzero(~np.isnan(samples.columns["temp_cpu_thermal_mc"])).tolist() == [0, 10, 20]
    assert not np.isnan(samples.columns["cpu0_active_ticks"]).any()
    assert not np.isnan(samples.columns["cpu0_freq_khz"]).any()


def test_torn_last_record_is_dropped(sysfs_tree, tmp_path):
    sampler = Sampler(SamplerConfig(out_csv=str(tmp_path / "s.csv"), sysfs_root=str(sysfs_tree("rpi4"))))
    first, second = sampler.poll(), sampler.poll()
    raw = first + second
    for cut in (1, 9, len(second) - 1):  # all inside the second record
        csv = io.StringIO()
        assert sampler.decode(io.BytesIO(raw[:-cut]), csv) == 1


def test_failed_reads_decode_as_empty_cells(tmp_path):
    pid = os.fork()
    if pid == 0:
        time.sleep(0.2)
        os._exit(0)
    sampler = Sampler(SamplerConfig(out_csv=str(tmp_path / "s.csv"), sensors=("process",), pid=pid))
    before = sampler.poll()
    os.waitpid(pid, 0)
    after = sampler.poll()  # /proc/<pid>/stat now fails with ESRCH
    csv = io.StringIO()
    sampler.decode(io.BytesIO(before + after), csv)
    lines = csv.getvalue().splitlines()
    assert lines[1].count(",") == 4 and ",," not in lines[1]  # time, utime, stime, rss, children's ticks
    assert lines[2].endswith(",,,,")


def test_a_stop_that_comes_while_a_record_is_read_gets_one_more_record_after_it(tmp_path, monkeypatch):
    """Recorded under load: the last record's time was 0.2 ms before the run's end (the test's t1), since SIGTERM
    arrived while a record was being read, after its time was taken, and the loop ended there; the trial window's
    end was then not covered.  The record after a stop is now always taken after the stop came."""
    sampler = Sampler(SamplerConfig(out_csv=str(tmp_path / "s.csv"), interval_ms=1, sensors=("cpu_time",)))
    real_poll, calls, stopped_at = sampler.poll, [], []

    def poll(every_source: bool = False) -> bytes:
        record = real_poll(every_source)  # its time is taken first
        calls.append(every_source)
        if len(calls) == 3:
            stopped_at.append(time.perf_counter_ns())
            sampler.stop()  # as the SIGTERM handler would, mid-record
        return record

    monkeypatch.setattr(sampler, "poll", poll)
    raw = io.BytesIO()
    meta = sampler.run(raw)
    csv = io.StringIO()
    sampler.decode(io.BytesIO(raw.getvalue()), csv)
    sampler.close()
    samples = parse_samples(csv.getvalue(), meta)
    assert calls == [False, False, False, True] and meta.samples == len(samples) == 4
    assert samples.t_ns[-1] > stopped_at[0]


def test_sampler_process_covers_the_run_and_reports_its_cost(tmp_path):
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), interval_ms=10, pid=os.getpid())
    proc = SamplerProcess(config).start()
    t0 = time.perf_counter_ns()
    time.sleep(0.3)
    t1 = time.perf_counter_ns()
    meta = proc.stop()
    samples = read_samples(config.out_csv, meta)
    assert samples.t_ns[0] <= t0 and samples.t_ns[-1] >= t1  # same monotonic clock as this process
    assert 10 <= len(samples) <= 60  # ~30 at 10 ms; loose for a loaded CI machine
    assert meta.loop_wall_s > 0.25 and meta.loop_cpu_s >= 0
    assert set(meta.unavailable) <= {
        "cpu_freq",
        "thermal",
        "rapl",
        "jetson_power",
        "jetson_gpu",
        "power_supply",
        "odpm",
        "nvml",
    }


def test_a_long_period_sampler_stops_at_once_with_its_last_sample(tmp_path):
    """``--interval 30s``: the stop wakes the sleeping loop, which takes the closing sample then, not 30 s later
    (the launcher gives up after 10 s, and ``run`` ended in a traceback)."""
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), interval_ms=30_000, pid=os.getpid())
    proc = SamplerProcess(config).start()
    time.sleep(0.2)
    t_stop = time.perf_counter_ns()
    meta = proc.stop(timeout_s=10.0)
    samples = read_samples(config.out_csv, meta)
    assert len(samples) == 2 and samples.t_ns[-1] >= t_stop


def test_sampler_process_start_failure_is_reported(tmp_path):
    config = SamplerConfig(out_csv=str(tmp_path / "missing-dir" / "s.csv"))
    with pytest.raises(RuntimeError, match="sampler failed to start"):
        SamplerProcess(config).start()


def test_last_record_reads_slow_sources_too(sysfs_tree, tmp_path):
    """The record taken after a stop reads every source, so a slow sensor has a reading at the end of the run."""
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), interval_ms=10, sysfs_root=str(sysfs_tree("rpi4")))
    sampler = Sampler(config)
    raw = b"".join(sampler.poll() for _ in range(5)) + sampler.poll(every_source=True)
    csv = io.StringIO()
    sampler.decode(io.BytesIO(raw), csv)
    temps = parse_samples(csv.getvalue()).columns["temp_cpu_thermal_mc"]
    assert np.flatnonzero(~np.isnan(temps)).tolist() == [0, 5]


def test_polled_source_records_bytes_and_failures(tmp_path):
    """A non-file source (NVML) goes through the same record format; an exception is a failed read."""
    from edgebench.host.sysfs import SysFS
    from edgebench.sensors.base import Source, open_source

    calls = iter([b"7 8", RuntimeError("gone")])

    def poll() -> bytes:
        item = next(calls)
        if isinstance(item, Exception):
            raise item
        return item

    handle = open_source(SysFS(tmp_path), Source("fake:0", 16, poll=poll))
    assert handle.read(16) == b"7 8"
    with pytest.raises(OSError, match="fake:0: gone"):
        handle.read(16)


def test_power_is_read_at_every_tick_of_the_trials_period(sysfs_tree, tmp_path):
    """A phone's rails at 10 ms, not at a slower sensor period: a trial shorter than 100 ms still has readings."""
    config = SamplerConfig(out_csv=str(tmp_path / "s.csv"), interval_ms=10, sysfs_root=str(sysfs_tree("android_phone")))
    sampler = Sampler(config)
    raw = b"".join(sampler.poll() for _ in range(25))
    csv = io.StringIO()
    sampler.decode(io.BytesIO(raw), csv)
    samples = parse_samples(csv.getvalue())
    for column in ("battery_voltage_uv", "battery_current_ua", "device_power_mw"):
        assert not np.isnan(samples.columns[column]).any(), column
