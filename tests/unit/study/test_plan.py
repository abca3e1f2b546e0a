"""A study's plan scaled to the device (its sensors, clusters, memory) and to the budget, and its refusals."""

from types import SimpleNamespace

import pytest

from edgebench.partition.solver import PointCost
from edgebench.study import dnntune, mnn_suite, partition, tx2
from edgebench.study import plan as study_plan
from edgebench.study.device import DeviceFacts


def facts(**changes):
    base = dict(allowed=(0, 1), clusters=(), frequencies=(), power_sensors=(), gpu_sensors=(), thermal=False,
                memory_available_bytes=8 << 30, runtimes=("torch",))  # fmt: skip
    return DeviceFacts(**{**base, **changes})


def models(p):
    return {t["model"] for t in p.trials}


def test_quick_plans_follow_the_device():
    here = tx2.plan(facts(), quick=True, budget_s=None)
    assert models(here) == {"lenet", "dqn"} and any("LSTM" in n for n in here.notes)
    jetson = tx2.plan(facts(gpu_sensors=("jetson_gpu",), power_sensors=("jetson_power",)), quick=True, budget_s=None)
    assert "char_cnn" in models(jetson)  # the LSTM beside the CNNs: Observation 5 needs a GPU to compare on
    one_type = dnntune.plan(facts(), quick=True, budget_s=None)
    assert not any(t.get("cores") for t in one_type.trials) and any("D4" in n for n in one_type.notes)
    big_little = dnntune.plan(facts(clusters=((0,), (1,))), quick=True, budget_s=None)
    assert any(t.get("cores") == (1,) for t in big_little.trials)  # the faster cluster, beside every core
    assert any(t.get("trace") == "layers" for t in big_little.trials)  # the partition's per-layer costs
    clocks = mnn_suite.plan(facts(frequencies=(345600, 1036800, 2035200)), quick=True, budget_s=None)
    assert {t.get("freq_khz") for t in clocks.trials} >= {345600, 2035200}
    assert not any(t.get("freq_khz") for t in mnn_suite.plan(facts(), quick=True, budget_s=None).trials)


def test_the_full_plan_leaves_out_what_does_not_fit_and_trims_to_the_budget(monkeypatch):
    counts = {"vgg16": (138_000_000, 90_000_000_000)}
    monkeypatch.setattr(study_plan, "model_counts", lambda m: counts.get(m, (1_000_000, 600_000_000)))
    small = tx2.plan(facts(memory_available_bytes=2 << 30), quick=False, budget_s=None)
    assert "vgg16" not in models(small) and any(n.startswith("vgg16 left out") for n in small.notes)
    whole = tx2.plan(facts(), quick=False, budget_s=None)
    trimmed = tx2.plan(facts(), quick=False, budget_s=600)
    assert len(trimmed.trials) < len(whole.trials) and trimmed.estimate_s <= 600
    assert any("left out to stay within the 10 min budget" in n for n in trimmed.notes)
    assert not any(t["model"] == "vgg16" and t["batch_size"] == 64 for t in trimmed.trials)  # dearest first
    fitted = [t for t in trimmed.trials if not t.get("until_accuracy")]
    for model in models(trimmed) - {"lenet"}:  # a model kept has the three trials over two batch sizes a fit needs
        mine = [t for t in fitted if t["model"] == model]
        assert len(mine) >= 3 and len({t["batch_size"] for t in mine}) >= 2, model
    assert any(t.get("until_accuracy") for t in trimmed.trials)  # Observation 12's trial, its time set aside


def _row(point, layer, mobile_ms, transfer_ms, cloud_ms):
    return PointCost(point=point, layer=layer, kind="split", tensors=1, mobile_ms=mobile_ms, up_bytes=0,
                     down_bytes=0, transfer_ms=transfer_ms, cloud_ms=cloud_ms,
                     total_ms=mobile_ms + transfer_ms + cloud_ms, transfer_energy_j=0.0, mobile_energy_j=None,
                     total_energy_j=None)  # fmt: skip


def test_the_best_split_depends_on_the_network_by_more_than_the_steps_noise():
    result = SimpleNamespace(latency=SimpleNamespace(step_ms=SimpleNamespace(mean=100.0, ci95=5.0, n=20)))
    slow = [_row(0, "(input)", 0, 900, 10), _row(1, "features", 60, 100, 5), _row(2, "classifier", 100, 1, 0)]
    fast = [_row(0, "(input)", 0, 20, 10), _row(1, "features", 60, 5, 5), _row(2, "classifier", 100, 0.1, 0)]
    found = {n: SimpleNamespace(rows=rows, best=min(rows, key=lambda r: r.total_ms))
             for n, rows in (("3g", slow), ("lte", slow), ("wifi", fast))}  # fmt: skip
    interval, which = partition.switching_cost(found, result, "latency")
    assert which.startswith("wifi's best ((input)) on 3g") and interval.estimate == pytest.approx(910 - 101)
    assert interval.low > 0  # 5% of the device parts (0 + 100 ms) is far below the 809 ms at stake
    same = {n: SimpleNamespace(rows=slow, best=slow[2]) for n in ("3g", "lte", "wifi")}
    assert partition.switching_cost(same, result, "latency") is None
