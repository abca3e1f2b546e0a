"""Memory budgets: the trial cannot use more than the budget, and a trial that needs more is infeasible."""

import pytest

from edgebench.units import MIB
from tests.conftest import json_out


def test_alexnet_below_its_need_is_infeasible_and_stays_within_the_budget(cli):
    budget = 600 * MIB
    proc = cli("run", "--model", "alexnet", "--batch-size", "4", "--steps", "1", "--warmup", "1",
               "--memory-budget", "600MiB", "--json")  # fmt: skip
    assert proc.returncode == 1
    r = json_out(proc)
    assert r["status"] == "infeasible" and r["trial"]["memory_budget_bytes"] == budget
    assert 200 * MIB < r["memory"]["peak_bytes"] <= budget * 1.05  # shared libraries count in RSS but not the limit
    assert "600.0 MiB memory budget" in r["reason"]
    assert proc.stderr.strip().splitlines() == [f"edgebench: error: trial infeasible: {r['reason']}"]


def test_feasibility_table(cli):
    proc = cli("feasibility", "--memory-budget", "700MiB", "-m", "lenet", "-m", "alexnet", "--batch-sizes", "1,4",
               "--preset", "cifar10", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json_out(proc)
    assert out["memory_budget_bytes"] == 700 * MIB and out["batch_sizes"] == [1, 4]
    lenet, alexnet = out["models"]
    assert lenet["successful"] == "yes" and lenet["preset"] == "mnist"  # lenet has no cifar10 input
    assert [c["status"] for c in lenet["cells"]] == ["ok", "ok"] and lenet["cells"][0]["peak_memory_bytes"] > 0
    assert alexnet["successful"] == "no" and alexnet["preset"] == "cifar10"
    assert [c["status"] for c in alexnet["cells"]] == ["infeasible", "skipped"]
    from edgebench.store import Store

    with Store(cli.store_path) as store:
        assert sorted(t.status for t in store.trials()) == ["infeasible", "ok", "ok"]


@pytest.mark.parametrize("budget", ["1B", "25MiB", "40MiB", "100MiB"])
def test_a_budget_too_small_to_start_is_infeasible_however_the_allocation_fails(cli, budget):
    # 1B is below what the worker uses at start, 25MiB fails loading libtorch, 40MiB in its C++ (std::bad_alloc,
    # then SIGABRT), 100MiB in OpenBLAS (its own message, then exit): each is the budget's doing, never a crash.
    proc = cli("run", "--memory-budget", budget, "--steps", "1", "--infer-steps", "0", "--json", "--no-store")
    r = json_out(proc)
    assert proc.returncode == 1
    assert r["status"] == "infeasible", r["reason"]
    assert "memory budget" in r["reason"]
