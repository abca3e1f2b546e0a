"""Reading the counts of a ``--command`` trial: the launcher's per-line readings and ``perf stat`` /
``simpleperf stat`` output in perf's units (the trials themselves: tests/e2e/host/test_command_counters.py)."""

from __future__ import annotations

from edgebench.agents.sh.counting import parse_launcher, parse_stat


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
