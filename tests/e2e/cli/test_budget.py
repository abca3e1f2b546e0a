"""Memory budgets: the trial cannot use more than the budget, and a trial that needs more is infeasible."""

import subprocess
import sys

import pytest

from edgebench.host.sysfs import SysFS
from edgebench.measure.budget import budget_outcome
from edgebench.records.bundle import MemoryWatch
from edgebench.runner.budget import wait_within_budget
from edgebench.runner.feasibility import Cell, Row
from tests.conftest import json_out

MiB = 2**20


def _watch(exceeded: bool, peak_rss_bytes: int | None) -> MemoryWatch:
    return MemoryWatch(exceeded=exceeded, peak_rss_bytes=peak_rss_bytes)


def test_rlimit_makes_an_allocation_over_the_budget_fail_in_the_process():
    code = (
        "from edgebench.runner.budget import apply_memory_budget\n"
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
    watch = wait_within_budget(hog, 60, 150 * MiB, SysFS("/"))
    assert watch.exceeded and hog.returncode is not None and watch.peak_rss_bytes > 150 * MiB


def test_watchdog_lets_a_small_process_finish():
    proc = subprocess.Popen([sys.executable, "-c", "pass"], text=True)
    watch = wait_within_budget(proc, 60, 4096 * MiB, SysFS("/"))
    assert not watch.exceeded and proc.returncode == 0


def test_outcomes_under_a_budget():
    status, reason, peak = budget_outcome("oom", "out of memory: x", 100 * MiB, _watch(False, 90 * MiB), 99 * MiB)
    assert status == "infeasible" and peak == 99 * MiB and "100.0 MiB memory budget; peak 99.0 MiB" in reason
    status, reason, _ = budget_outcome("crashed", "killed", 100 * MiB, _watch(True, 120 * MiB), None)
    assert status == "infeasible" and "needs more than the 100.0 MiB" in reason
    assert budget_outcome("crashed", "ValueError: x", 100 * MiB, _watch(False, 1), None)[:2] == (
        "crashed",
        "ValueError: x",
    )


def test_alexnet_below_its_need_is_infeasible_and_stays_within_the_budget(cli):
    budget = 600 * MiB
    proc = cli("run", "--model", "alexnet", "--batch-size", "4", "--steps", "1", "--warmup", "1",
               "--memory-budget", "600MiB", "--json")  # fmt: skip
    assert proc.returncode == 1
    r = json_out(proc)
    assert r["status"] == "infeasible" and r["trial"]["memory_budget_bytes"] == budget
    assert 200 * MiB < r["memory"]["peak_bytes"] <= budget * 1.05  # shared libraries count in RSS but not the limit
    assert "600.0 MiB memory budget" in r["reason"]
    assert proc.stderr.strip().splitlines() == [f"edgebench: error: trial infeasible: {r['reason']}"]


def test_feasibility_table(cli):
    proc = cli("feasibility", "--memory-budget", "700MiB", "-m", "lenet", "-m", "alexnet", "--batch-sizes", "1,4",
               "--preset", "cifar10", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json_out(proc)
    assert out["memory_budget_bytes"] == 700 * MiB and out["batch_sizes"] == [1, 4]
    lenet, alexnet = out["models"]
    assert lenet["successful"] == "yes" and lenet["preset"] == "mnist"  # lenet has no cifar10 input
    assert [c["status"] for c in lenet["cells"]] == ["ok", "ok"] and lenet["cells"][0]["peak_memory_bytes"] > 0
    assert alexnet["successful"] == "no" and alexnet["preset"] == "cifar10"
    assert [c["status"] for c in alexnet["cells"]] == ["infeasible", "skipped"]
    from edgebench.store import Store

    with Store(cli.store_path) as store:
        assert sorted(t.status for t in store.trials()) == ["infeasible", "ok", "ok"]


def test_row_verdicts():
    assert Row("m", "p", [Cell(1, "ok"), Cell(2, "ok")]).successful == "yes"
    assert Row("m", "p", [Cell(1, "ok"), Cell(2, "infeasible")]).successful == "partly"
    assert Row("m", "p", [Cell(1, "infeasible"), Cell(2, "skipped")]).successful == "no"


@pytest.mark.parametrize("budget", ["1B", "25MiB", "40MiB", "100MiB"])
def test_a_budget_too_small_to_start_is_infeasible_however_the_allocation_fails(cli, budget):
    # 1B is below what the worker uses at start, 25MiB fails loading libtorch, 40MiB in its C++ (std::bad_alloc,
    # then SIGABRT), 100MiB in OpenBLAS (its own message, then exit): each is the budget's doing, never a crash.
    proc = cli("run", "--memory-budget", budget, "--steps", "1", "--infer-steps", "0", "--json", "--no-store")
    r = json_out(proc)
    assert proc.returncode == 1
    assert r["status"] == "infeasible", r["reason"]
    assert "memory budget" in r["reason"]
