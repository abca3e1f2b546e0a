"""The monitor's loop in-process on fixture trees: the MNN suite's files, throttling while it happens, and an
import cost small enough for small boards.  ``edgebench monitor`` run as a user runs it is in
tests/e2e/cli/test_monitor.py.
"""

import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from edgebench.monitor.session import MonitorConfig, run_monitor


def csv_rows(path):
    lines = path.read_text().splitlines()
    return lines[0], lines[1:]


def test_phone_monitor_writes_every_file(sysfs_tree, tmp_path):
    out = tmp_path / "run"
    config = MonitorConfig(out, interval_ms=5, sysfs_root=str(sysfs_tree("android_phone")), max_samples=40)
    summary = run_monitor(config)  # the battery is read every 100 ms: at rows 1, 21
    assert summary.samples == 40 and summary.stopped_by == "end of the sample budget"
    assert sorted(p.name for p in out.iterdir()) == ["freq_temperature.csv", "meta.json", "samples.csv", "summary.json"]
    header, rows = csv_rows(out / "freq_temperature.csv")
    assert header == ",stamp,temperature,cpu0,cpu1,cpu2,cpu3,cpu4,cpu5,cpu6,cpu7"
    first = rows[0].split(",")
    assert first == ["1", "0", "247", *["1785600"] * 4, *["710400"] * 3, "825600"]  # battery temp as dumpsys prints
    assert [int(r.split(",")[0]) for r in rows] == list(range(1, 41))
    stamps = [int(r.split(",")[1]) for r in rows]
    assert stamps == sorted(stamps) and all(r.split(",")[2] == "247" for r in rows)  # held between slow readings
    header, rows = csv_rows(out / "samples.csv")
    assert header.startswith("t_ns,cpu0_active_ticks") and "device_power_mw" in header and len(rows) == 40
    assert json.loads((out / "summary.json").read_text())["energy"]["device"]["avg_power_w"] == pytest.approx(1.986)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["power_channels"][0]["name"] == "device" and meta["policies"][1]["cores"] == [4, 5, 6]


def test_board_without_cpufreq_still_gets_the_suite_columns(sysfs_tree, tmp_path):
    run_monitor(MonitorConfig(tmp_path / "c", interval_ms=1, sysfs_root=str(sysfs_tree("container")), max_samples=3))
    header, rows = csv_rows(tmp_path / "c" / "freq_temperature.csv")
    assert header == ",stamp,temperature,cpu0,cpu1,cpu2,cpu3,cpu4,cpu5,cpu6,cpu7"  # always the suite's eight
    assert rows[0].split(",")[2:] == ["nan"] * 9  # nothing to report is the suite's nan, not invented


def test_throttling_is_detected_and_reported_while_it_happens(sysfs_tree, tmp_path):
    tree = tmp_path / "pi"
    shutil.copytree(sysfs_tree("rpi4"), tree)
    stat, freq = tree / "proc/stat", tree / "sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq"
    temp = tree / "sys/class/thermal/thermal_zone0/temp"
    stop = threading.Event()

    def overwrite(path, text: str) -> None:
        """In place and at a fixed length, as the kernel updates a value: a reader never sees a truncated file."""
        fd = os.open(path, os.O_WRONLY)
        os.pwrite(fd, text.encode(), 0)
        os.close(fd)

    def proc_stat(active: int) -> str:
        cpu = "".join(f"cpu{c} {1000 + active:08d} 0 0 {5000 + active // 8:08d} 0 0 0 0 0 0\n" for c in range(4))
        return f"cpu  0 0 0 0 0 0 0 0 0 0\n{cpu}intr 0\n"

    stat.write_text(proc_stat(0))

    def busy_board() -> None:
        """Stands for a board under load that heats up: ticks grow busy, then the clock drops while hot."""
        t0, active = time.monotonic(), 0
        while not stop.is_set():
            active += 2
            overwrite(stat, proc_stat(active))
            if time.monotonic() - t0 > 0.8:
                overwrite(freq, "0900000\n")
                overwrite(temp, "86000\n")
            time.sleep(0.01)

    events = []
    writer = threading.Thread(target=busy_board, daemon=True)
    writer.start()
    try:
        config = MonitorConfig(tmp_path / "m", interval_ms=10, duration_s=2.5, sysfs_root=str(tree), hot_c=80.0,
                               window_s=0.25)  # fmt: skip
        summary = run_monitor(config, on_throttle=lambda kind, e: events.append((kind, time.monotonic(), e)))
    finally:
        stop.set()
        writer.join()
    assert summary.stopped_by == "end of --duration"
    assert [kind for kind, _, _ in events][:1] == ["start"]
    (episode,) = summary.throttling
    assert episode["policy"] == "policy0" and episode["min_freq_khz"] == pytest.approx(900000)
    assert 0.5 < episode["duration_s"] < 2.0 and episode["max_temp_c"] == pytest.approx(86.0)


def test_the_monitor_loads_neither_torch_nor_pydantic():
    """The monitoring loop runs for hours on small boards; torch, pydantic or pandas would each add 15 MiB or more
    to it (the ``edgebench`` command line loads pydantic for its options; ``run_monitor`` from Python does not)."""
    code = "import sys, edgebench.monitor.session; print(sorted({'torch', 'pydantic', 'pandas'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
