"""The layer graph's cut sizes against the real tensors of a forward pass."""

import pytest
import torch
from torch import nn

from edgebench.graph.layer_graph import INPUT
from edgebench.graph.torch_graph import layer_graph, workload_graph
from edgebench.partition.costs import transfer_bytes


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


def test_a_bf16_trial_sends_bf16_activations_and_a_gan_has_no_single_pass():
    fp32, bf16 = workload_graph("lenet", 2), workload_graph("lenet", 2, precision="bf16")
    (a,), (b,) = fp32.crossing(3), bf16.crossing(3)
    assert (a.dtype, b.dtype) == ("float32", "bfloat16") and b.nbytes * 2 == a.nbytes
    assert bf16.crossing(0)[0].dtype == "float32"  # the input is the batch as it is
    with pytest.raises(ValueError, match="no single pass to cut"):
        workload_graph("dcgan", 2)
