"""Linux perf event counters for real: software events count on this machine, hardware ones are refused in one
line where the kernel exposes no PMU (this project's VM), and ``--counters`` reaches steps, layers and the trace."""

from __future__ import annotations

import pytest

from edgebench.host.perf_events import HARDWARE, SOFTWARE, open_counters, parse_counters, refusal
from tests.paths import HAS_PMU


def test_software_counters_count_this_process_and_its_threads():
    import mmap
    import threading

    counters = open_counters(("task-clock", "page-faults", "context-switches"))
    try:
        before = counters.read()
        # fresh anonymous pages touched one by one: minor faults (a bytearray may get memory the process's allocator
        # kept from an earlier test, already faulted in: one run counted 1 fault)
        with mmap.mmap(-1, 64 * 2**20) as pages:
            for i in range(0, len(pages), 4096):
                pages[i] = 1
        worker = threading.Thread(target=lambda: sum(range(2_000_000)))  # a thread started after opening
        worker.start()
        worker.join()
        after = counters.read()
    finally:
        counters.close()
    task_ns, faults, _switches = (b - a for a, b in zip(before, after, strict=True))
    # at least half as many faults as 2 MiB pages: transparent huge pages may back the whole buffer (a full run
    # here saw that), and 4 KiB pages give far more
    assert faults >= 64 * 2**20 // (2 * 2**20) // 2
    assert task_ns > 0 and after[0] > before[0]


def test_hardware_events_answer_as_this_kernel_exposes_them():
    why = refusal(("cycles", "cache-misses"))
    if HAS_PMU:
        assert why is None
    else:
        assert why is not None and why.startswith("cycles is a hardware event")
        assert "ENOENT" in why and "no hardware PMU" in why and "task-clock" in why and "\n" not in why


def test_event_names_are_perfs_own():
    assert parse_counters("cache-references, cache-misses,task-clock,task-clock") == (
        "cache-references",
        "cache-misses",
        "task-clock",
    )
    assert set(HARDWARE) >= {"cycles", "instructions", "cache-references", "cache-misses"}
    assert set(SOFTWARE) >= {"page-faults", "context-switches", "task-clock"}
    with pytest.raises(ValueError, match="unknown perf event 'LLC'; known: cycles"):
        parse_counters("LLC")


@pytest.mark.parametrize("text", [",,,", " , ", ""])
def test_counters_that_name_nothing_are_refused(text):
    """Issue 39: ``--counters ',,,'`` ran with no counters."""
    from edgebench.host.perf_events import parse_counters

    with pytest.raises(ValueError, match="names no event"):
        parse_counters(text)


def test_the_flag_naming_no_counter_is_one_line(capsys):
    from tests.factories import refused

    assert "--counters" in refused(capsys, "run", "--no-store", "--backend", "fake", "--counters", ",,,")
