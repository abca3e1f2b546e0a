"""The layer tracer on models with in-place activations, the per-module FLOP counter on the tracer's model and labels
(the counter's own tests: tests/unit/graph/test_layer_costs.py), and the op tracer."""

import time

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from edgebench.backends.torch.tracing.layers import LayerTracer, spans_from_events
from edgebench.backends.torch.tracing.ops import OpTracer, ops_table
from edgebench.graph.layer_costs import count_layer_costs
from edgebench.measure.attribution import table_segments
from edgebench.records.spans import BACKWARD, FORWARD, OPTIMIZER, SpanTable
from edgebench.workloads import get_workload


class InplaceNet(nn.Module):
    """A ReLU(inplace=True) straight after a conv and after a batch norm, and a residual add: what breaks
    full backward hooks."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False), nn.BatchNorm2d(8),
                                   nn.ReLU(inplace=True))  # fmt: skip
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        x = x + self.block(x)
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def timed_steps(model: nn.Module, x: torch.Tensor, y: torch.Tensor, n: int) -> list[tuple[int, int, int]]:
    """``n`` SGD steps; returns (start, backward start, backward end) per step."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    marks = []
    for _ in range(n):
        t0 = time.perf_counter_ns()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        t1 = time.perf_counter_ns()
        loss.backward()
        t2 = time.perf_counter_ns()
        opt.step()
        marks.append((t0, t1, t2))
    return marks


def check_nesting(table: SpanTable) -> None:
    stack: list[int] = []
    for start, end in zip(table.start_ns.tolist(), table.end_ns.tolist(), strict=True):
        while stack and stack[-1] <= start:
            stack.pop()
        assert not stack or end <= stack[-1], "spans must nest"
        stack.append(end)


def test_full_backward_hooks_fail_on_this_model():
    model = InplaceNet()
    for module in model.modules():
        module.register_full_backward_hook(lambda *args: None)
    with pytest.raises(RuntimeError, match="modified inplace"):
        model(torch.randn(2, 3, 8, 8)).sum().backward()


def test_layer_tracer_records_forward_and_backward_of_every_leaf_with_inplace_relus():
    torch.manual_seed(0)
    model = InplaceNet()
    x, y = torch.randn(4, 3, 8, 8), torch.tensor([0, 1, 2, 3])
    reference = InplaceNet()
    reference.load_state_dict(model.state_dict())
    tracer = LayerTracer(model).install()
    timed_steps(model, x, y, 1)  # warm-up, not recorded
    tracer.start()
    marks = timed_steps(model, x, y, 3)
    tracer.stop()
    tracer.remove()
    table = tracer.table()
    assert all("forward" not in m.__dict__ for m in model.modules())  # removed cleanly
    check_nesting(table)
    names = list(table.names)
    for leaf in ("stem.0", "stem.1", "block.0", "block.1", "block.2", "head"):
        label = names.index(leaf)
        for kind in (FORWARD, BACKWARD):
            assert ((table.label == label) & (table.kind == kind)).sum() == 3, (leaf, kind)
    # every span lies in its phase of some step: forward before loss.backward(), backward inside it
    for label, kind, start, end in zip(table.label, table.kind, table.start_ns, table.end_ns, strict=True):
        inside = [t0 <= start and end <= t1 if kind == FORWARD else t1 <= start and end <= t2 for t0, t1, t2 in marks]
        assert any(inside), (names[label], kind)
    # the model's own backward runs cover its leaves' backward time and fit in backward()
    root_bwd = table.end_ns[(table.label == 0) & (table.kind == BACKWARD)] - table.start_ns[
        (table.label == 0) & (table.kind == BACKWARD)]  # fmt: skip
    assert len(root_bwd) == 3
    assert root_bwd.sum() <= sum(t2 - t1 for _, t1, t2 in marks)
    # nodes hooked: every leaf's, the model's own ops (residual add, pool, flatten), and one exit per branch end
    begins = [tracer.names[lab] for code, lab, _ in tracer.events() if code == 2]
    ends = sorted(tracer.names[lab] for code, lab, _ in tracer.events() if code == 3)
    assert begins.count("InplaceNet") == 3 * 3 and begins.count("block.0") == 3
    assert ends == ["head"] * 3 + ["stem.0"] * 3  # the stem conv runs last; the head's weight transpose ends a branch
    # the tracer changes no numbers: same weights after the same steps
    timed_steps(reference, x, y, 4)
    for a, b in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(a, b)


def test_mobilenet_v2_traces_every_layer_every_step():
    session = get_workload("mobilenet_v2").session(2, input_shape=(3, 32, 32))
    tracer = LayerTracer(session.model).install()
    session.train_step()
    tracer.start()
    for _ in range(2):
        session.train_step()
    tracer.stop()
    tracer.remove()
    table = tracer.table()
    check_nesting(table)
    convs = [i for i, t in enumerate(table.types) if t == "Conv2d"]
    assert len(convs) == 52
    for label in convs:
        assert ((table.label == label) & (table.kind == BACKWARD)).sum() == 2
    relu6 = [i for i, t in enumerate(table.types) if t == "ReLU6"]
    assert len(relu6) == 35 and all(((table.label == i) & (table.kind == BACKWARD)).sum() == 2 for i in relu6)
    assert SpanTable.from_json(table.to_json()).names == table.names  # what the worker stores reads back


def test_shared_module_called_twice_gets_two_spans_per_step():
    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.fc2, self.act = nn.Linear(4, 4), nn.Linear(4, 4), nn.ReLU()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.act(self.fc2(self.act(self.fc1(x))))

    model = Twice()
    tracer = LayerTracer(model).install()
    tracer.start()
    model(torch.randn(3, 4)).sum().backward()
    tracer.stop()
    table = tracer.table()
    act = list(table.names).index("act")
    assert ((table.label == act) & (table.kind == FORWARD)).sum() == 2
    assert ((table.label == act) & (table.kind == BACKWARD)).sum() == 2  # fc2's backward runs between them
    check_nesting(table)


def test_per_module_flops_forward_and_backward_with_a_depthwise_layer():
    model = InplaceNet()
    x, y = torch.randn(2, 3, 8, 8), torch.tensor([0, 1])
    costs, unattributed = count_layer_costs(model, lambda: F.cross_entropy(model(x), y).backward())
    names = list(LayerTracer(model).names)
    flops = dict(zip(names, zip(costs["forward_flops"], costs["backward_flops"], strict=True), strict=True))
    stem = 2 * 2 * 64 * (8 * 3 * 9)
    assert flops["stem.0"] == (stem, stem)  # the input needs no gradient: grad-weight only
    depthwise = 2 * 2 * 64 * 72
    assert flops["block.0"] == (depthwise, 2 * depthwise)  # grad-input and grad-weight, groups honoured
    assert flops["head"] == (2 * 2 * 8 * 4, 2 * 2 * 2 * 8 * 4)
    assert flops["block.1"] == (0, 0) and flops["stem.1"] == (0, 0)  # element-wise: bytes only
    assert costs["forward_bytes"][names.index("block.1")] > 0
    assert costs["forward_bytes"][names.index("InplaceNet")] > 0  # the residual add and the pool are its own
    assert unattributed["forward_flops"] == 0


def test_op_tracer_records_aten_ops_by_phase_on_the_monotonic_clock():
    session = get_workload("lenet").session(4)
    session.train_step()
    tracer = OpTracer().install()
    tracer.start()
    t0 = time.perf_counter_ns()
    for _ in range(2):
        session.train_step()
    t1 = time.perf_counter_ns()
    tracer.stop()
    table = tracer.table()
    kinds = set(table.kind.tolist())
    assert {FORWARD, BACKWARD, OPTIMIZER} <= kinds
    assert any(n.startswith("aten::") and "conv" in n for n in table.names)
    backward_convs = [table.names[lab] for lab, k in zip(table.label, table.kind, strict=True) if k == BACKWARD]
    assert any("convolution_backward" in n for n in backward_convs)
    # converted from the profiler's wall clock: within the stepped window (1 ms slack for the offset)
    assert table.start_ns.min() >= t0 - 1_000_000 and table.end_ns.max() <= t1 + 1_000_000
    segments = table_segments(table)
    assert np.all(segments.end_ns > segments.start_ns)


def test_backward_runs_from_hand_built_events():
    # labels: 0 model, 1 block (child of 0), 2 conv and 3 relu (children of 1), 4 head (child of 0)
    parents = [-1, 0, 1, 1, 0]
    fb, fe, bb, be = 0, 1, 2, 3
    events = [
        (fb, 0, 0), (fb, 1, 1), (fb, 2, 2), (fe, 2, 3), (fb, 3, 4), (fe, 3, 5), (fe, 1, 6), (fb, 4, 7), (fe, 4, 8),
        (fe, 0, 9),
        # backward: head 20-25, the model's own op 25-27, relu 27-30, conv 30-34 (an exit: its post-hook ends it)
        (bb, 4, 20), (bb, 0, 25), (bb, 3, 27), (bb, 2, 30), (be, 2, 34),
        # the next step's forward closes every run; a last node without an end gets no time
        (fb, 0, 50), (fe, 0, 51), (bb, 4, 60), (fb, 0, 70), (fe, 0, 71),
    ]  # fmt: skip
    rows = spans_from_events(events, parents, tid=9)
    backward = sorted((lab, a, b) for lab, kind, a, b, _ in rows if kind == BACKWARD)
    assert backward == [(0, 20, 34), (0, 60, 60), (1, 27, 34), (2, 30, 34), (3, 27, 30), (4, 20, 25), (4, 60, 60)]
    forward = sorted((lab, a, b) for lab, kind, a, b, _ in rows if kind == FORWARD)
    assert forward[:5] == [(0, 0, 9), (0, 50, 51), (0, 70, 71), (1, 1, 6), (2, 2, 3)]


def test_op_kinds_follow_the_enclosing_scope():
    raw = [
        ("aten::conv2d", 0, 10, 1),
        ("aten::convolution", 1, 9, 1),
        ("autograd::engine::evaluate_function: ConvolutionBackward0", 20, 30, 1),
        ("aten::convolution_backward", 21, 29, 1),
        ("Optimizer.step#SGD.step", 40, 50, 1),
        ("aten::add_", 41, 42, 1),
        ("aten::add_", 60, 61, 2),  # another thread
    ]
    table = ops_table(raw, main_tid=777)
    kinds = {
        (table.names[lab], int(s)): int(k) for lab, k, s in zip(table.label, table.kind, table.start_ns, strict=True)
    }
    assert kinds[("aten::conv2d", 0)] == FORWARD and kinds[("aten::convolution", 1)] == FORWARD
    assert kinds[("aten::convolution_backward", 21)] == BACKWARD
    assert kinds[("aten::add_", 41)] == OPTIMIZER and kinds[("aten::add_", 60)] == FORWARD
    assert set(table.tid.tolist()) == {777, 1_000_000_002}
    assert table.thread_names[777] == "worker main thread"
