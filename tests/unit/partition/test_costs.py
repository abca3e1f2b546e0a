"""The cost table from per-layer reports: calls, container shares, inference scaling, training, energy sources."""

import pytest

from edgebench.graph.layer_graph import INPUT, ContainerShare, GraphTensor, LayerGraph, Unit
from edgebench.measure.layers import LayerReport, LayerRow
from edgebench.partition.costs import build_table
from tests.factories import result


def row(name, fwd, bwd=0.0, power_w=None):
    total = fwd + bwd
    return LayerRow(name=name, type="T", depth=1, calls_per_step=1, forward_ms=fwd, backward_ms=bwd, optimizer_ms=0,
                    total_ms=total, share_pct=0, power_w=power_w,
                    energy_j=None if power_w is None else power_w * total / 1e3)  # fmt: skip


def report(rows, other_ms=10.0, other_power_w=None):
    other = row("(other)", other_ms, 0.0, other_power_w)
    return LayerReport(trial_id="t", model="net", batch_size=1, granularity="layers", steps=1, step_ms=100,
                       depth=None, cores=[0], rows=rows, other=other)  # fmt: skip


# a, then b called twice; the root's own op (an add) runs on the unit before it: the second call of b.
GRAPH = LayerGraph(
    model="net",
    batch_size=1,
    units=(Unit("a", "a", "Conv", 10), Unit("b", "b", "Linear", 30), Unit("b#2", "b", "Linear", 0)),
    tensors=(
        GraphTensor(INPUT, (0,), 4, "float32", 4, True, False),
        GraphTensor(0, (1, 2), 4, "float32", 4, True, True),
    ),
    shares=(ContainerShare("Net", 2, 1.0),),
)
ROWS = [row("Net", 1.0, 2.0, 2.0), row("a", 2.0, 4.0, 5.0), row("b", 6.0, 8.0, 3.0)]


def test_inference_times_split_calls_take_container_shares_and_scale_to_the_inference_latency():
    r = result("dev", [20.0], infer_ms=[4.5], energy_source="rapl: psys (energy counter)", idle_power_w=1.0)
    table = build_table(GRAPH, "infer", (r, report(ROWS)), cloud_speedup=4)
    # Traced forward: a 2, b 3 + 3, the root's 1 on b#2 -> 9 ms; measured inference 4.5 ms -> x0.5.
    assert [u.mobile_ms for u in table.units] == pytest.approx([1.0, 1.5, 2.0])
    assert [u.cloud_ms for u in table.units] == pytest.approx([0.25, 0.375, 0.5])
    assert "scaled x0.50 to its measured inference latency" in table.mobile_source
    assert table.cloud_source.startswith("--cloud-speedup 4:")
    # Measured power above the 1 W idle: a 5 W, b 3 W; b#2 mixes b (3 ms at 3 W) and the root (1 ms at 2 W).
    assert table.units[0].mobile_energy_j == pytest.approx(4.0 * 1.0e-3)
    assert table.units[1].mobile_energy_j == pytest.approx(2.0 * 1.5e-3)
    assert table.units[2].mobile_energy_j == pytest.approx((11.0 / 4 - 1.0) * 2.0e-3)
    assert table.energy_source.startswith("measured: rapl: psys") and "above idle 1.00 W" in table.energy_source


def test_training_adds_backward_and_splits_the_rest_of_the_step_by_parameters():
    r = result("dev", [50.0], estimated_avg_power_w=3.0, estimated_idle_power_w=1.0,
               estimated_energy_source="estimated: utilization idle=1W,max=5W")  # fmt: skip
    table = build_table(GRAPH, "train", (r, report(ROWS, other_ms=8.0)), cloud_speedup=2)
    # a: 6 + 8 * 10/40; b: 7 + 8 * 30/40; b#2: 7 + the root's 3.
    assert [u.mobile_ms for u in table.units] == pytest.approx([8.0, 13.0, 10.0])
    assert table.energy_source == "estimated: utilization idle=1W,max=5W (2.00 W above idle, the trial's mean)"
    assert [u.mobile_energy_j for u in table.units] == pytest.approx([0.016, 0.026, 0.020])
    assert "forward + backward" in table.mobile_source


def test_without_power_or_estimate_energy_is_unknown_and_a_server_trial_gives_server_times():
    r = result("dev", [20.0])
    server = result("srv", [2.0], batch_size=4, env={"hostname": "server"})
    fast = [row("Net", 0.1), row("a", 0.2), row("b", 0.4)]
    table = build_table(GRAPH, "infer", (r, report(ROWS)), cloud=(server, report(fast)))
    assert all(u.mobile_energy_j is None for u in table.units) and table.energy_source is None
    assert any("energy cannot be ranked" in n for n in table.notes)
    assert [u.cloud_ms for u in table.units] == pytest.approx([0.2, 0.2, 0.3])
    assert table.cloud_source == "trial srv (server, batch 4)"
    assert any("server trial ran at batch 4" in n for n in table.notes)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "1e400"])
def test_a_cloud_speedup_that_is_no_speedup_is_refused(capsys, value):
    """Issue 39: ``--cloud-speedup nan`` was accepted (every comparison with it false), ``inf`` too."""
    from tests.factories import refused

    assert "--cloud-speedup" in refused(capsys, "partition", "--cloud-speedup", value, "--predicted")
