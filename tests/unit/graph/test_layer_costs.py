"""Each module's own FLOPs and bytes per step, counted under a dispatch mode, against torch's counter and a published
figure (the per-module counter against the whole-model count: test_flops.py)."""

import pytest
from torch.utils.flop_counter import FlopCounterMode

from edgebench.graph.layer_costs import count_layer_costs
from edgebench.graph.modules import module_labels
from edgebench.workloads import get_workload


def test_flops_match_torch_where_torch_is_right():
    session = get_workload("lenet").session(4)
    costs, _ = count_layer_costs(session.model, session.train_step)
    counter = FlopCounterMode(display=False)
    with counter:
        session.train_step()
    assert costs["forward_flops"].sum() + costs["backward_flops"].sum() == counter.get_total_flops()


def test_mobilenet_v2_forward_flops_match_the_published_figure():
    session = get_workload("mobilenet_v2").session(1)
    costs, _ = count_layer_costs(session.model, session.train_step)
    # MobileNetV2 1.0 at 224: 300M multiply-adds (Sandler et al.; DNNTune lists 300M), here with 1001 classes
    assert costs["forward_flops"].sum() / 2 == pytest.approx(300e6, rel=0.02)
    # backward: twice the forward, less the first conv's unneeded grad-input
    first = costs["forward_flops"][module_labels(session.model)[1].index("features.0.0")]
    assert costs["backward_flops"].sum() == pytest.approx(2 * costs["forward_flops"].sum() - first)
