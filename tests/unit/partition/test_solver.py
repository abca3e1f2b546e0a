"""The partition solver on hand-built cost tables whose optima are known (no torch, no trial)."""

import itertools
import random

import pytest

from edgebench.graph.layer_graph import INPUT, GraphTensor
from edgebench.partition.analysis import analyze
from edgebench.partition.costs import CostTable, UnitCost
from edgebench.partition.network import NetworkProfile
from edgebench.partition.solver import best_point, block_points, dag_best_cut, frontier_points, point_cost
from edgebench.partition.sweep import parse_bandwidth_range, sweep_bandwidth

# 8 Mbps both ways: one byte takes 1 us, so bytes / 1000 is ms.
LINK = NetworkProfile(
    name="test",
    up_mbps=8.0,
    down_mbps=8.0,
    rtt_ms=0.0,
    alpha_up_mw_per_mbps=100.0,
    alpha_down_mw_per_mbps=50.0,
    beta_mw=200.0,
)


def tensor(producer, consumers, n_bytes, *, output=False, grad=True):
    return GraphTensor(producer, tuple(consumers), n_bytes // 4, "float32", 4, True, grad, output)


def table(units, tensors, mode="infer", label_bytes=0):
    costs = tuple(UnitCost(f"u{i}", "T", m, c, e) for i, (m, c, e) in enumerate(units))
    return CostTable("hand", 1, mode, costs, tuple(tensors), label_bytes, "hand", "hand", "hand")


def chain(units, sizes, out_bytes=40, mode="infer"):
    """A chain: input of sizes[0] bytes into u0, u_i's output of sizes[i + 1] bytes into u_{i+1}."""
    n = len(units)
    ts = [tensor(INPUT, [0], sizes[0], grad=False)]
    ts += [tensor(i, [i + 1], sizes[i + 1]) for i in range(n - 1)]
    ts.append(tensor(n - 1, [], out_bytes, output=True))
    return table(units, ts, mode)


def test_chain_rows_are_dnntune_sums_and_the_known_optimum_wins():
    # Device 10 ms a layer, server 1 ms; u1 shrinks the data to 1 kB, so cutting after u1 is best.
    t = chain([(10.0, 1.0, 0.01)] * 4, [100_000, 50_000, 1_000, 20_000], out_bytes=40)
    rows = frontier_points(t, LINK)
    assert [r.point for r in rows] == [0, 1, 2, 3, 4]
    assert [r.kind for r in rows] == ["cloud-only", "split", "split", "split", "mobile-only"]
    cut = rows[2]
    assert cut.layer == "u1" and cut.tensors == 1
    assert cut.mobile_ms == pytest.approx(20.0) and cut.cloud_ms == pytest.approx(2.0)
    assert cut.up_bytes == 1_000 and cut.down_bytes == 40
    assert cut.transfer_ms == pytest.approx(1.0 + 0.04)
    assert cut.total_ms == pytest.approx(20.0 + 1.04 + 2.0)
    # Radio: (100 mW/Mbps * 8 Mbps + 200 mW) * 1 ms + (50 * 8 + 200) mW * 0.04 ms, in J.
    assert cut.transfer_energy_j == pytest.approx(1000e-6 + 600 * 0.04e-6)
    assert cut.mobile_energy_j == pytest.approx(0.02)
    assert cut.total_energy_j == pytest.approx(0.02 + 1000e-6 + 24e-6)
    assert rows[0].up_bytes == 100_000 and rows[0].total_ms == pytest.approx(100.0 + 0.04 + 4.0)
    assert rows[-1].up_bytes == rows[-1].down_bytes == 0 and rows[-1].total_ms == pytest.approx(40.0)
    assert best_point(rows, "latency").point == 2
    # Device energy grows with every device layer: sending the input costs 0.1 J, so the 1 kB cut still wins.
    assert best_point(rows, "energy").point == 2


def test_round_trip_is_paid_by_every_point_that_uses_the_server():
    t = chain([(10.0, 1.0, 0.0)] * 2, [1_000, 1_000])
    rtt = LINK.model_copy(update={"rtt_ms": 50.0})
    rows = frontier_points(t, rtt)
    assert [r.transfer_ms for r in rows] == pytest.approx([51.04, 51.04, 0.0])
    assert best_point(rows, "latency").kind == "mobile-only"


def test_ties_go_to_the_lower_other_objective_then_to_the_later_point():
    # Points 1 and 2 tie on latency (11 ms); point 2 sends less, so its radio energy is lower.
    t = chain([(5.0, 0.0, 0.0), (1.0, 0.0, 0.0), (100.0, 0.0, 0.0)], [20_000, 5_000, 4_000], out_bytes=0)
    rows = frontier_points(t, LINK)
    assert rows[1].total_ms == pytest.approx(10.0) and rows[2].total_ms == pytest.approx(10.0)
    assert best_point(rows, "latency").point == 2
    # A full tie (same bytes both ways): the later point, so more of the model stays on the device.
    t = chain([(5.0, 0.0, 0.0), (0.0, 0.0, 0.0), (100.0, 0.0, 0.0)], [20_000, 5_000, 5_000], out_bytes=0)
    rows = frontier_points(t, LINK)
    assert rows[1].total_ms == rows[2].total_ms and rows[1].transfer_energy_j == rows[2].transfer_energy_j
    assert best_point(rows, "latency").point == 2


def test_energy_cannot_be_ranked_without_device_energy():
    t = chain([(1.0, 1.0, None)] * 2, [100, 100])
    rows = frontier_points(t, LINK)
    assert rows[0].total_energy_j is not None  # cloud-only runs nothing on the device
    assert rows[1].total_energy_j is None
    with pytest.raises(ValueError, match="energy cannot be ranked"):
        best_point(rows, "energy")
    assert best_point(rows, "latency").point in (0, 1, 2)


def test_transfer_dtype_halves_floating_tensors_only():
    ts = [
        tensor(INPUT, [0], 4_000),
        GraphTensor(0, (1,), 1_000, "int64", 8, False, False),
        tensor(1, [], 40, output=True),
    ]
    t = table([(1.0, 1.0, 0.0)] * 2, ts)
    assert frontier_points(t, LINK)[0].up_bytes == 4_000
    assert frontier_points(t, LINK, transfer_dtype="fp16")[0].up_bytes == 2_000
    assert frontier_points(t, LINK, transfer_dtype="int8")[0].up_bytes == 1_000
    assert frontier_points(t, LINK, transfer_dtype="fp16")[1].up_bytes == 8_000  # the int64 tensor is not cast


def test_split_learning_returns_the_gradient_and_sends_the_labels():
    t = chain([(10.0, 1.0, 0.0)] * 3, [3_000, 2_000, 1_000], out_bytes=40, mode="train")
    t = CostTable(t.model, 1, "train", t.units, t.tensors, 64, "", "", "")
    rows = frontier_points(t, LINK)
    assert rows[1].up_bytes == 2_000 + 64 and rows[1].down_bytes == 2_000  # activation up, its gradient down
    assert rows[0].up_bytes == 3_000 + 64 and rows[0].down_bytes == 0  # the input needs no gradient
    assert rows[3].up_bytes == rows[3].down_bytes == 0


def branchy():
    """p -> q (slow on the device) and the input -> r -> r2, both into c: the best cut is not a prefix.

    Execution order p, q, r, r2, c.  Running p, r, r2 on the device and q, c on the server sends 10 B + 100 B;
    every prefix either runs q on the device (100 ms) or sends the 1 MB input for r.
    """
    units = [(1.0, 1.0, 0.001), (100.0, 1.0, 0.1), (1.0, 1.0, 0.001), (1.0, 1.0, 0.001), (1.0, 1.0, 0.001)]
    ts = [
        tensor(INPUT, [0, 2], 1_000_000, grad=False),
        tensor(0, [1], 12),
        tensor(1, [4], 100),
        tensor(2, [3], 1_000_000),
        tensor(3, [4], 100),
        tensor(4, [], 40, output=True),
    ]
    return table(units, ts)


def test_branchy_model_cuts_inside_branches_and_the_frontiers_miss_the_dag_cut():
    t = branchy()
    rows = frontier_points(t, LINK)
    assert [r.tensors for r in rows] == [1, 2, 2, 2, 2, 0]  # every split point is inside a branch
    assert rows[1].up_bytes == 1_000_000 + 12  # the input still goes up for r
    best = best_point(rows, "latency")
    assert best.kind == "mobile-only" and best.total_ms == pytest.approx(104.0)
    dag = dag_best_cut(t, LINK, "latency", best)
    assert dag.on_device == (True, False, True, True, False)
    assert dag.frontier_misses and dag.cost.kind == "dag-cut"
    assert dag.cost.up_bytes == 12 + 100 and dag.cost.down_bytes == 40
    assert dag.cost.total_ms == pytest.approx(3.0 + 2.0 + 0.112 + 0.04)
    assert dag.gain == pytest.approx(104.0 - dag.cost.total_ms)
    a = analyze(t, LINK, "latency")
    assert a.branch_points == 4 and a.single_tensor_points == 0
    assert a.dag_cut.frontier_misses and a.dag_cut.device_units == ["u0", "u2", "u3"]


def test_a_chain_never_misses_and_the_dag_cut_is_the_best_frontier():
    t = chain([(10.0, 1.0, 0.01)] * 4, [100_000, 50_000, 1_000, 20_000])
    rows = frontier_points(t, LINK)
    for objective in ("latency", "energy"):
        best = best_point(rows, objective)
        dag = dag_best_cut(t, LINK, objective, best)
        assert not dag.frontier_misses and dag.cost.point == best.point and dag.gain == 0


def _brute_force(t, objective, link):
    """The best valid assignment by enumeration: a device unit never reads a server unit's tensor."""
    n = len(t.units)
    best = None
    for bits in itertools.product([True, False], repeat=n):
        if any(bits[c] and tt.producer != INPUT and not bits[tt.producer] for tt in t.tensors for c in tt.consumers):
            continue
        value = point_cost(t, link, bits).value(objective)
        best = value if best is None else min(best, value)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_min_cut_matches_brute_force_on_random_dags(seed):
    rng = random.Random(seed)
    n = rng.randint(3, 8)
    units = [(rng.uniform(1, 50), rng.uniform(0.1, 5), rng.uniform(0.001, 0.05)) for _ in range(n)]
    ts = [tensor(INPUT, sorted(rng.sample(range(n), rng.randint(1, 2))), rng.randint(1, 50) * 4_000, grad=False)]
    for i in range(n - 1):
        later = list(range(i + 1, n))
        ts.append(tensor(i, sorted(rng.sample(later, min(len(later), rng.randint(1, 2)))), rng.randint(1, 50) * 4_000))
    ts.append(tensor(n - 1, [], 400, output=True))
    t = table(units, ts)
    link = LINK.model_copy(update={"rtt_ms": rng.choice([0.0, 5.0])})
    for objective in ("latency", "energy"):
        rows = frontier_points(t, link)
        best = best_point(rows, objective)
        dag = dag_best_cut(t, link, objective, best)
        found = dag.cost.value(objective)
        assert found == pytest.approx(_brute_force(t, objective, link), rel=1e-9)
        assert dag.frontier_misses == (found < best.value(objective) - 1e-9)


def test_bandwidth_sweep_finds_the_crossover_where_sending_the_input_starts_to_pay():
    # Mobile-only 100 ms; cloud-only sends 125 kB (1 Mbit) and computes nothing: equal at 10 Mbps.
    t = table([(100.0, 0.0, 0.0)], [tensor(INPUT, [0], 125_000)])
    rows = frontier_points(t, LINK)
    segments = sweep_bandwidth(rows, LINK, "latency", 0.5, 100.0)
    assert [s.kind for s in segments] == ["mobile-only", "cloud-only"]
    assert segments[0].to_mbps == pytest.approx(10.0, rel=2e-3) == segments[1].from_mbps
    assert segments[0].from_mbps == 0.5 and segments[1].to_mbps == 100.0


def test_bandwidth_ranges_parse_in_mbps():
    assert parse_bandwidth_range("0.5-100Mbps") == (0.5, 100.0)
    assert parse_bandwidth_range("500-2000kbps") == (0.5, 2.0)
    assert parse_bandwidth_range("1-2") == (1.0, 2.0)
    for bad in ("fast", "100-0.5Mbps", "0-10Mbps", "1-2 furlongs"):
        with pytest.raises(ValueError, match=r"0\.5-100Mbps"):
            parse_bandwidth_range(bad)


def test_depth_keeps_only_block_boundaries():
    units = tuple(
        UnitCost(name, "T", 1.0, 1.0, 0.0) for name in ("stem", "blk.0.conv", "blk.0.bn", "blk.1.conv", "blk.1.conv#2")
    )
    t = CostTable("hand", 1, "infer", units, (tensor(INPUT, [0], 400),), 0, "", "", "")
    assert block_points(t, 1) == [1]
    assert block_points(t, 2) == [1, 3]
    assert block_points(t, 3) == [1, 2, 3]  # a repeated call of one module is never split from itself
    assert [r.point for r in frontier_points(t, LINK, points=block_points(t, 2))] == [0, 1, 3, 5]


def test_min_cut_on_a_deep_chain_needs_no_recursion():
    # Energy: no edge from the source to the layers, so every augmenting path walks the whole chain.
    n = 1500
    t = chain([(1.0, 0.1, 0.001)] * n, [40_000] + [4_000] * (n - 1))
    rows = frontier_points(t, LINK, points=[1, n // 2, n - 1])
    best = best_point(rows, "energy")
    dag = dag_best_cut(t, LINK, "energy", best)
    assert not dag.frontier_misses and dag.cost.value("energy") <= best.value("energy") + 1e-12


def test_tied_minimum_cuts_keep_the_fewest_units_on_the_device():
    """Two minimum cuts (before or after unit 0): the one that runs less on the device, also where the two differ
    only by a rounding error of the float sums (0.1 + 0.2 against 0.3), as the hand-written max-flow chose."""
    from edgebench.partition.solver import _device_side

    s, t = 1, 2
    assert _device_side({(s, 0): 1.0, (0, t): 1.0}, s, t) == {s}
    assert _device_side({(s, 0): 0.1 + 0.2, (0, t): 0.3}, s, t) == {s}
    assert _device_side({(s, 0): 0.3, (0, t): 0.1 + 0.2}, s, t) == {s}
    assert _device_side({(s, 0): 2.0, (0, t): 1.0}, s, t) == {s, 0}  # no tie: the cheaper cut after unit 0


def test_table4_takes_the_saving_over_repeats_and_says_when_they_pick_different_points():
    """Seen: a 53.8% saving printed from one trial.  Each repeat of the traced configuration is analysed: the row's
    saving is their mean with its interval, and repeats that pick different points make no clear best."""
    from edgebench.partition.table4 import table4

    def analysis(device_ms):
        return analyze(chain([(device_ms, 1.0, 0.01)] * 4, [100_000, 50_000, 1_000, 20_000]), LINK, "latency")

    same = [analysis(ms) for ms in (10.0, 10.4, 9.8)]
    t = table4([("board", "t1", same[0])], repeats={"board": same})
    (row,) = t.rows
    assert row.repeats == 3 and row.saving_low_pct < row.saving_pct < row.saving_high_pct
    assert row.points_picked is None and not any("no clear best" in n for n in t.notes)
    moved = [analysis(10.0), analysis(0.2)]  # a device fast enough in one repeat runs everything itself
    row = table4([("board", "t1", moved[0])], repeats={"board": moved}).rows[0]
    assert row.points_picked == {"u1": 1, "mobile only": 1}
    one = table4([("board", "t1", same[0])])
    assert one.rows[0].repeats == 1 and one.rows[0].saving_low_pct is None
    assert any("one repeat: its saving and point come from one process" in n for n in one.notes)
