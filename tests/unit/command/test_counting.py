"""``--counters`` on a ``--command`` trial: the user's command's whole process tree counted for real, per step
where its step lines bracket the steps (this machine: edgebench's launcher over perf_event_open), over the whole
run through ``perf stat`` on a device reached over SSH, and refused in one line naming what a device lacks."""

from __future__ import annotations

import sys
from pathlib import Path

from edgebench.command.counting import parse_launcher, parse_stat

EVENTS = "task-clock,context-switches,page-faults"
PERF_INSTALL = "apt-get install -y linux-perf"
PATTERN = r"^step (?P<i>\d+) cpu_ns (?P<cpu_ns>\d+)$"
#: Busy for 60 ms of CPU per step and say how much CPU time the step took by the process's own clock.
BUSY = """
import time
for i in range(4):
    t = time.process_time_ns()
    while time.process_time_ns() - t < 60_000_000:
        pass
    print(f"step {i} cpu_ns {time.process_time_ns() - t}", flush=True)
"""


def _busy_command(tmp_path: Path) -> str:
    script = tmp_path / "busy.py"
    script.write_text(BUSY)
    # `| cat`: the Python process is a child of the command's shell, not the shell itself: the tree is counted
    return f"{sys.executable} {script} | cat"


def test_the_launchers_readings_bracket_each_line():
    text = "names task-clock page-faults\n1 100 5\n2 250 9\nend 300 9\n"
    readings = parse_launcher(text)
    assert readings is not None and readings.window() == {"task-clock": 300, "page-faults": 9}
    assert readings.between(None, 1, last=False) == {"task-clock": 100, "page-faults": 5}
    assert readings.between(1, 2, last=False) == {"task-clock": 150, "page-faults": 4}
    assert readings.between(2, 3, last=True) == {"task-clock": 50, "page-faults": 0}  # a last line with no newline
    assert readings.between(2, 3, last=False) is None
    assert parse_launcher("") is None


def test_perf_and_simpleperf_stat_output_read_in_perfs_units():
    names = ("task-clock", "page-faults", "cycles")
    perf = ("# started on Thu Nov 26 04:10:01 2026\n\n69.40,msec,task-clock,69400857,100.00,0.469,CPUs utilized\n"
            "64,,page-faults,69400857,100.00,922.179,/sec\n<not supported>,,cycles,0,100.00,,\n")  # fmt: skip
    readings, missing = parse_stat("perf", perf, names)
    assert missing == ["cycles"] and readings.total is None
    readings, missing = parse_stat("perf", perf, names[:2])
    assert not missing and readings.window() == {"task-clock": 69_400_000, "page-faults": 64}
    simple = "Performance counter statistics,\n69400857,task-clock,0.469 cpus used,\n64,page-faults,922/sec,\n"
    readings, missing = parse_stat("simpleperf", simple, names[:2])
    assert not missing and readings.window() == {"task-clock": 69_400_857, "page-faults": 64}
