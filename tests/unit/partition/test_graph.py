"""The layer graph's cut sizes against the real tensors of a forward pass, and the network profiles."""

import pytest
import torch
from torch import nn

from edgebench.backends.torch.cuts import layer_graph, workload_graph
from edgebench.errors import UsageError
from edgebench.partition.costs import transfer_bytes
from edgebench.partition.graph import INPUT
from edgebench.partition.network import DEFAULT_NETWORKS, choose_network, load_networks


class Residual(nn.Module):
    """``x + body(x)``: the add runs in the container's own forward, not in a leaf."""

    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(inplace=True), nn.Linear(2 * width, width))

    def forward(self, x):
        return x + self.body(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(12, 16)
        self.block = Residual(16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(torch.relu(self.block(self.stem(x))))


def graph_of(model, x):
    return layer_graph(model, lambda: model(x), model_name="net", batch_size=x.shape[0])


def test_units_follow_execution_order_and_weights_are_not_traffic():
    g = graph_of(Net(), torch.randn(5, 12))
    assert [u.name for u in g.units] == ["stem", "block.body.0", "block.body.1", "block.body.2", "head"]
    assert [u.params for u in g.units] == [12 * 16 + 16, 16 * 32 + 32, 0, 32 * 16 + 16, 16 * 3 + 3]
    assert all(t.producer >= INPUT for t in g.tensors)
    assert sum(t.nbytes for t in g.crossing(0)) == 5 * 12 * 4  # the input only, no weights


def test_inside_a_residual_block_both_branches_cross():
    torch.manual_seed(0)
    model, x = Net(), torch.randn(5, 12)
    g = graph_of(model, x)
    with torch.no_grad():
        skip = model.stem(x)
        hidden = model.block.body[1](model.block.body[0](skip))
    # After block.body.1 (the inplace ReLU): the skip tensor and the hidden activation both cross.
    inside = g.crossing(3)
    assert sorted(t.nbytes for t in inside) == sorted([skip.numel() * 4, hidden.numel() * 4])
    assert len(inside) == 2
    # After block.body.2 the add belongs to the unit that ran last, so one tensor (the sum) crosses; the
    # container's own ops are also charged to that unit.
    after = g.crossing(4)
    assert [t.nbytes for t in after] == [5 * 16 * 4]
    assert {s.module: s.unit for s in g.shares}["block"] == 3
    # Before the block: the stem's output only.
    assert [t.nbytes for t in g.crossing(1)] == [skip.numel() * 4]
    out = [t for t in g.tensors if t.output]
    assert len(out) == 1 and out[0].nbytes == 5 * 3 * 4 and out[0].producer == 4


def test_bytes_follow_the_dtype_and_the_transfer_dtype():
    model, x = Net().to(torch.bfloat16), torch.randn(5, 12, dtype=torch.bfloat16)
    g = graph_of(model, x)
    (crossing,) = g.crossing(1)
    assert crossing.dtype == "bfloat16" and crossing.nbytes == 5 * 16 * 2
    assert transfer_bytes(crossing, "int8") == 5 * 16
    assert transfer_bytes(crossing, "fp32") == 5 * 16 * 2  # never inflated


def test_lenet_cut_sizes_are_its_real_activations():
    g = workload_graph("lenet", 4)
    assert g.label_bytes == 4 * 8  # int64 labels
    names = [u.name for u in g.units]
    torch.manual_seed(0)
    from edgebench.workloads import get_workload

    model = get_workload("lenet").build_model(10, (1, 28, 28))
    x = torch.randn(4, 1, 28, 28)
    with torch.no_grad():
        for p in range(1, len(g.units)):
            module = dict(model.named_modules())[names[p - 1]]
            x = module(x)
            (crossing,) = g.crossing(p)
            assert crossing.nbytes == x.numel() * x.element_size(), names[p - 1]
    assert g.crossing(len(g.units)) == []


def test_resnet_has_branch_points_that_send_more():
    g = workload_graph("resnet50", 1)
    counts = [len(g.crossing(p)) for p in range(1, len(g.units))]
    assert max(counts) == 2 and counts.count(1) < len(counts) // 2


def test_default_networks_are_the_reference_figures():
    wifi, lte, g3 = DEFAULT_NETWORKS["wifi"], DEFAULT_NETWORKS["lte"], DEFAULT_NETWORKS["3g"]
    assert (wifi.up_mbps, lte.up_mbps, g3.up_mbps) == (18.88, 5.85, 1.1)
    assert (lte.alpha_up_mw_per_mbps, lte.alpha_down_mw_per_mbps, lte.beta_mw) == (438.39, 51.97, 1288.04)
    assert (wifi.alpha_up_mw_per_mbps, wifi.alpha_down_mw_per_mbps, wifi.beta_mw) == (283.17, 137.01, 132.86)
    assert (g3.alpha_up_mw_per_mbps, g3.alpha_down_mw_per_mbps, g3.beta_mw) == (868.98, 122.12, 817.88)
    # 1 MB up over LTE: 8 Mbit / 5.85 Mbps, at 438.39 * 5.85 + 1288.04 mW.
    assert lte.up_ms(1e6) == pytest.approx(8e3 / 5.85)
    assert lte.up_energy_j(1e6) == pytest.approx((438.39 * 5.85 + 1288.04) * 1e-3 * 8 / 5.85)
    assert choose_network(DEFAULT_NETWORKS, "4G").name == "lte"


def test_user_networks_from_yaml(tmp_path):
    path = tmp_path / "nets.yaml"
    path.write_text("networks:\n  lab:\n    up_mbps: 100\n    down_mbps: 200\n    rtt_ms: 2\n  wifi:\n"
                    "    up_mbps: 50\n    down_mbps: 50\n    rtt_ms: 5\n    alpha_up_mw_per_mbps: 1\n"
                    "    alpha_down_mw_per_mbps: 1\n    beta_mw: 1\n")  # fmt: skip
    nets = load_networks(path)
    assert nets["lab"].up_mbps == 100 and nets["lab"].beta_mw == DEFAULT_NETWORKS["wifi"].beta_mw
    assert "Wi-Fi default" in nets["lab"].source
    assert nets["wifi"].up_mbps == 50 and nets["3g"] == DEFAULT_NETWORKS["3g"]
    path.write_text("networks:\n  lab:\n    up_mbps: -1\n    down_mbps: 2\n    rtt_ms: 1\n")
    with pytest.raises(UsageError, match=r"networks\.lab\.up_mbps: must be greater than 0"):
        load_networks(path)
    path.write_text("networks:\n  lab:\n    up_mbps: 1\n    down_mbps: 2\n    rtt_ms: 1\n    speed: 3\n")
    with pytest.raises(UsageError, match=r"networks\.lab\.speed"):
        load_networks(path)
    with pytest.raises(UsageError, match="--network: 'carrier-pigeon' is not a network profile"):
        choose_network(nets, "carrier-pigeon")


def test_a_bf16_trial_sends_bf16_activations_and_a_gan_has_no_single_pass():
    fp32, bf16 = workload_graph("lenet", 2), workload_graph("lenet", 2, precision="bf16")
    (a,), (b,) = fp32.crossing(3), bf16.crossing(3)
    assert (a.dtype, b.dtype) == ("float32", "bfloat16") and b.nbytes * 2 == a.nbytes
    assert bf16.crossing(0)[0].dtype == "float32"  # the input is the batch as it is
    with pytest.raises(ValueError, match="no single pass to cut"):
        workload_graph("dcgan", 2)
