"""Memory budgets in-process: the rlimit and the watchdog on small child processes, and the feasibility verdicts.
The trials run by the command are in tests/e2e/cli/test_budget.py.
"""

import subprocess
import sys

from edgebench.agents.python.budget import wait_within_budget
from edgebench.agents.python.feasibility import Cell, Row
from edgebench.host.sysfs import SysFS
from edgebench.measure.budget import budget_outcome
from edgebench.records.bundle import MemoryWatch
from edgebench.units import MIB


def _watch(exceeded: bool, peak_rss_bytes: int | None) -> MemoryWatch:
    return MemoryWatch(exceeded=exceeded, peak_rss_bytes=peak_rss_bytes)


def test_rlimit_makes_an_allocation_over_the_budget_fail_in_the_process():
    code = (
        "from edgebench.agents.python.budget import apply_memory_budget\n"
        "apply_memory_budget(200 * 2**20)\n"
        "try:\n    b = bytearray(400 * 2**20)\nexcept MemoryError:\n    print('refused')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "refused", out.stderr


def test_watchdog_kills_a_process_that_outgrows_the_budget():
    hog = subprocess.Popen(
        [sys.executable, "-c", "import time\nb = bytearray(300 * 2**20)\nb[::4096] = b'x' * len(b[::4096])\n"
         "time.sleep(60)"],
        text=True,
    )  # fmt: skip
    watch = wait_within_budget(hog, 60, 150 * MIB, SysFS("/"))
    assert watch.exceeded and hog.returncode is not None and watch.peak_rss_bytes > 150 * MIB


def test_watchdog_lets_a_small_process_finish():
    proc = subprocess.Popen([sys.executable, "-c", "pass"], text=True)
    watch = wait_within_budget(proc, 60, 4096 * MIB, SysFS("/"))
    assert not watch.exceeded and proc.returncode == 0


def test_outcomes_under_a_budget():
    status, reason, peak = budget_outcome("oom", "out of memory: x", 100 * MIB, _watch(False, 90 * MIB), 99 * MIB)
    assert status == "infeasible" and peak == 99 * MIB and "100.0 MiB memory budget; peak 99.0 MiB" in reason
    status, reason, _ = budget_outcome("crashed", "killed", 100 * MIB, _watch(True, 120 * MIB), None)
    assert status == "infeasible" and "needs more than the 100.0 MiB" in reason
    assert budget_outcome("crashed", "ValueError: x", 100 * MIB, _watch(False, 1), None)[:2] == (
        "crashed",
        "ValueError: x",
    )


def test_row_verdicts():
    assert Row("m", "p", [Cell(1, "ok"), Cell(2, "ok")]).successful == "yes"
    assert Row("m", "p", [Cell(1, "ok"), Cell(2, "infeasible")]).successful == "partly"
    assert Row("m", "p", [Cell(1, "infeasible"), Cell(2, "skipped")]).successful == "no"
