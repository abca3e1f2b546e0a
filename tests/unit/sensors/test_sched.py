"""The scheduler's per-thread counters: schedstat and status parsed, a process's threads read through SysFS (a tree
built here, and this process's own /proc), their growth over a window, and the sampler's sensor."""

from __future__ import annotations

import threading

from edgebench.host.sysfs import SysFS
from edgebench.sensors.sched import (
    SchedSensor,
    ThreadCounts,
    growth,
    parse_involuntary_switches,
    parse_schedstat,
    read_threads,
)

STATUS = "Name:\tpython\nvoluntary_ctxt_switches:\t20\nnonvoluntary_ctxt_switches:\t33\n"


def task_tree(root, pid: int, threads: dict[int, tuple[str, str]]):
    for tid, (schedstat, status) in threads.items():
        folder = root / "proc" / str(pid) / "task" / str(tid)
        folder.mkdir(parents=True)
        (folder / "schedstat").write_text(schedstat)
        (folder / "status").write_text(status)
    (root / "proc" / str(pid) / "stat").write_text(f"{pid} (python) S 1 0 0 0 0 0 0 0 0 0 5 3 0 0 20 0 1 0 0 0 9\n")
    return SysFS(root)


def test_schedstat_lines_of_every_thread_sum_and_a_status_gives_its_involuntary_switches():
    assert parse_schedstat(b"59823290 151438006 54\n168509 6110630 4\n") == (59823290 + 168509, 151438006 + 6110630)
    assert parse_schedstat(b"") is None and parse_schedstat("not numbers\n") is None
    assert parse_involuntary_switches(STATUS) == 33 and parse_involuntary_switches("Name:\tx\n") is None


def test_a_processs_threads_are_read_per_thread_and_grow_over_a_window(tmp_path):
    sysfs = task_tree(tmp_path, 42, {42: ("1000 500 3\n", STATUS), 43: ("200 100 1\n", STATUS)})
    start = read_threads(sysfs, 42)
    assert start == {"42": ThreadCounts(1000, 500, 33), "43": ThreadCounts(200, 100, 33)}
    # thread 43 ended, 44 was born: the living threads' growth, the newborn's from 0
    end = {"42": ThreadCounts(3000, 1500, 40), "44": ThreadCounts(300, 700, 5)}
    assert growth(start, end) == ThreadCounts(2000 + 300, 1000 + 700, 7 + 5)
    assert growth({}, end) is None and growth(start, {}) is None
    assert growth(start, {"42": ThreadCounts(3000, 1500, None)}).involuntary_switches is None


def test_this_processs_own_threads_are_read_from_the_real_proc():
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        threads = read_threads(SysFS("/"), "self")
    finally:
        stop.set()
        helper.join()
    assert len(threads) >= 2  # this thread and the helper
    assert all(c.on_cpu_ns >= 0 and c.run_queue_wait_ns >= 0 and c.involuntary_switches is not None
               for c in threads.values())  # fmt: skip
    assert sum(c.on_cpu_ns for c in threads.values()) > 0


def test_the_samplers_sensor_reads_a_pattern_of_every_threads_schedstat(tmp_path):
    sysfs = task_tree(tmp_path, 7, {7: ("10 20 1\n", STATUS), 8: ("30 40 2\n", STATUS)})
    sensor = SchedSensor(sysfs, pid=7)
    assert sensor.available()
    assert sensor.open() == ("proc_on_cpu_ns", "proc_run_queue_wait_ns")
    assert [s.path for s in sensor.sources()] == ["/proc/7/task/*/schedstat"]
    assert sensor.decode([b"10 20 1\n30 40 2\n"]) == [40, 60]
    assert sensor.decode([None]) == [None, None]
    assert sensor.read() == [40, 60]  # in-process: the pattern read through SysFS
    assert not SchedSensor(sysfs, pid=99).available()
