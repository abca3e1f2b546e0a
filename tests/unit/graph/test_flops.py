"""FLOP counting: forward and backward, grouped and depthwise convolutions included, against hand-computed figures."""

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from edgebench.graph.counts import ModelCounter
from edgebench.graph.flops import conv_flops, count_flops, counted_flops
from edgebench.report.catalog import reference_info
from edgebench.workloads import get_workload
from edgebench.zoo.mobilenet_v1 import BLOCKS

C, H = 96, 56  # a depthwise 3x3 on 96 channels at 56x56, stride 1
DEPTHWISE_MACS = C * H * H * 9


def _depthwise_step():
    with torch.device("meta"):
        conv = nn.Conv2d(C, C, 3, padding=1, groups=C, bias=False)
        x = torch.empty(1, C, H, H, requires_grad=True)
    return lambda: conv(x).sum().backward()


def test_depthwise_forward_and_backward_by_hand():
    with torch.device("meta"):
        conv = nn.Conv2d(C, C, 3, padding=1, groups=C, bias=False)
        x = torch.empty(1, C, H, H)
    assert counted_flops(lambda: conv(x)) == 2 * DEPTHWISE_MACS
    # backward = input gradient + weight gradient, each as many multiply-adds as the forward
    assert counted_flops(_depthwise_step()) == 3 * 2 * DEPTHWISE_MACS


def test_torch_counter_overcounts_the_depthwise_backward_which_we_correct():
    with FlopCounterMode(display=False) as plain:
        _depthwise_step()()
    assert plain.get_total_flops() / (3 * 2 * DEPTHWISE_MACS) == pytest.approx((2 + C) / 3)  # 32.7x the truth
    assert plain.get_total_flops() - 2 * DEPTHWISE_MACS == pytest.approx((1 + C) * 2 * DEPTHWISE_MACS)  # 97x


def test_grouped_conv_backward():
    with torch.device("meta"):
        conv = nn.Conv2d(64, 128, 3, padding=1, groups=4, bias=False)
        x = torch.empty(2, 64, 16, 16, requires_grad=True)
    macs = 2 * 128 * 16 * 16 * (64 // 4) * 9
    assert counted_flops(lambda: conv(x).sum().backward()) == 3 * 2 * macs


def mobilenet_v1_macs_by_hand(size: int = 224, classes: int = 1000) -> int:
    """Table 1 of Howard et al.: a 3x3/2 full conv, then depthwise 3x3 + pointwise 1x1 per block, then the fc."""
    hw = size // 2
    macs = hw * hw * 3 * 32 * 9
    ch = 32
    for out, stride in BLOCKS:
        hw //= stride
        macs += hw * hw * ch * 9 + hw * hw * ch * out
        ch = out
    return macs + ch * classes


def test_full_model_against_a_hand_computed_figure():
    count = count_flops(get_workload("mobilenet_v1"))
    assert count.forward_macs == mobilenet_v1_macs_by_hand()  # 568.7M; the paper says 569M
    # training: forward + input and weight gradients, but no input gradient for the image itself
    first_conv_macs = 112 * 112 * 3 * 32 * 9
    assert count.train_flops == 3 * count.forward_flops - 2 * first_conv_macs


def test_lenet_by_hand():
    conv1, conv2 = 24 * 24 * 20 * 25, 8 * 8 * 50 * 20 * 25
    fc1, fc2 = 800 * 400, 400 * 10
    count = count_flops(get_workload("lenet"))
    assert count.forward_macs == conv1 + conv2 + fc1 + fc2
    assert count.train_flops == 2 * (3 * (conv1 + conv2 + fc1 + fc2) - conv1)


def test_lstm_is_counted_through_its_matmuls():
    count = count_flops(get_workload("deepspeech"))
    hidden, steps = 1600, 16
    per_step = 494 * hidden + 2 * hidden * hidden + 4 * hidden * 2 * hidden + hidden * hidden + hidden * 29
    assert count.forward_macs == steps * per_step  # DNNTune: 464M for 16 steps


@pytest.mark.parametrize(
    "name", ["googlenet", "squeezenet_1_1", "resnet50", "vgg16", "mobilenet_v2", "shufflenet_v2_0.5x", "deeplab_v3"]
)
def test_published_flop_figures_hold(name):
    w = get_workload(name)
    counter = ModelCounter()
    for ref in w.references:
        if ref.quantity != "params":
            info = reference_info(w, ref, counter.reference(w, ref))
            assert info.within_tolerance, f"{name} {ref.source}: {info.measured:.4g} vs {ref.value:.4g}"


@pytest.mark.parametrize(("name", "shape"), [("lenet", None), ("mobilenet_v2", (3, 64, 64))])
def test_the_per_layer_counter_adds_up_to_the_whole_model_count(name, shape):
    """The tracer's per-module FLOPs (a real step) and the catalogue's count (meta device) are one formula."""
    from edgebench.graph.layer_costs import count_layer_costs

    workload = get_workload(name)
    whole = count_flops(workload, input_shape=shape, batch_size=4)
    session = workload.session(4, input_shape=shape)
    costs, unattributed = count_layer_costs(session.model, session.train_step)
    assert costs["forward_flops"].sum() + costs["backward_flops"].sum() == whole.train_flops * 4
    assert unattributed["forward_flops"] == unattributed["backward_flops"] == 0  # the loss and SGD hold no matmuls


def test_the_fused_cpu_lstm_is_counted_per_layer():
    """On the CPU an LSTM runs as one oneDNN kernel per layer, whose matmuls never reach the dispatcher; the
    counter takes its FLOPs from the kernel's shapes.  Forward agrees exactly with the decomposed count on meta;
    backward is 0.2% above it, because the fused kernel also computes the gradient of the zero initial state."""
    from edgebench.graph.layer_costs import count_layer_costs

    workload = get_workload("rnn_ptb_small")
    whole = count_flops(workload, batch_size=4)
    session = workload.session(4)
    costs, _ = count_layer_costs(session.model, session.train_step)
    assert costs["forward_flops"].sum() == whole.forward_flops * 4
    train = costs["forward_flops"].sum() + costs["backward_flops"].sum()
    assert train == pytest.approx(whole.train_flops * 4, rel=0.005) and train >= whole.train_flops * 4


def test_conv_flops_by_hand():
    # N=2, 8x8 output, C_out=8, C_in=3, 3x3: 2 * 2 * 64 * (8 * 3 * 9)
    assert conv_flops((2, 8, 8, 8), (2, 3, 8, 8), (8, 3, 3, 3), transposed=False) == 2 * 2 * 64 * 216
    # depthwise: weight 8x1x3x3
    assert conv_flops((2, 8, 8, 8), (2, 8, 8, 8), (8, 1, 3, 3), transposed=False) == 2 * 2 * 64 * 72
