"""The model zoo: every model the three source systems name, at its published size, each training on CPU."""

import math

import pytest
import torch

from edgebench.graph.counts import ModelCounter
from edgebench.registry import MODELS
from edgebench.report.catalog import reference_info
from edgebench.workloads import get_workload

#: Every model of REFERENCE.md sections 1-3 (issue 3's list).
ZOO = [
    "lenet", "alexnet", "squeezenet", "squeezenet_1_1", "googlenet", "inception_v3", "vgg16", "vgg19", "resnet50",
    "resnet101", "resnet152", "densenet40", "densenet100", "xception", "mobilenet_v1", "mobilenet_v2",
    "shufflenet_v2_0.5x", "deeplab_v3", "char_cnn", "rnn_ptb_small", "seq2seq", "transformer", "bert_base",
    "deepspeech", "mnist_mlp", "dcgan", "dqn",
]  # fmt: skip

#: Standard published parameter counts at the published configuration (issue 3), within 1%.
STANDARD_PARAMS = {
    "resnet50": 25.6e6, "vgg16": 138e6, "mobilenet_v2": 3.5e6, "googlenet": 6.62e6, "mobilenet_v1": 4.2e6,
    "squeezenet_1_1": 1.24e6, "shufflenet_v2_0.5x": 1.37e6, "alexnet": 61.1e6, "vgg19": 143.7e6, "resnet101": 44.5e6,
    "resnet152": 60.2e6, "xception": 22.9e6, "bert_base": 110e6, "densenet40": 1.02e6, "densenet100": 7.0e6,
    "rnn_ptb_small": 2.65e6, "deepspeech": 29e6, "mnist_mlp": 13.9e6, "transformer": 49e6, "seq2seq": 348e6,
    "dqn": 1.7e6, "inception_v3": 23.8e6, "deeplab_v3": 2.1e6,
}  # fmt: skip


def test_every_source_model_is_registered():
    assert set(ZOO) <= set(MODELS.names())
    for alias, name in [("inception_v1", "googlenet"), ("mobilenetv2", "mobilenet_v2"), ("bert", "bert_base")]:
        assert MODELS.canonical(alias) == name


@pytest.mark.parametrize("name", ZOO)
def test_workload_has_presets_and_sourced_references(name):
    w = get_workload(name)
    assert w.presets, "every workload names its inputs"
    assert w.default_preset.input_shape == w.input_shape
    assert w.references and all(r.source for r in w.references)
    for r in w.references:
        w.preset(r.preset)  # every figure names an input the workload has


@pytest.mark.parametrize("name", ZOO)
def test_published_parameter_counts_hold(name):
    counter = ModelCounter(flops=False)
    w = get_workload(name)
    for ref in w.references:
        info = reference_info(w, ref, counter.reference(w, ref))
        if ref.quantity == "params":
            assert info.within_tolerance, f"{ref.source}: {info.measured:,.0f} vs {ref.value:,.0f}"


@pytest.mark.parametrize(("name", "expected"), sorted(STANDARD_PARAMS.items()))
def test_standard_figure_within_one_percent(name, expected):
    w = get_workload(name)
    ref = next(r for r in w.references if r.quantity == "params")
    measured = ModelCounter(flops=False).reference(w, ref)
    assert measured == pytest.approx(expected, rel=0.01)


def test_rnn_ptb_reference_leaves_the_embedding_out_and_dcgan_counts_each_net():
    counter = ModelCounter(flops=False)
    ptb = get_workload("rnn_ptb_small")
    assert counter.count(ptb).params == 2_653_200 + 10_000 * 200  # the trained model learns its embedding
    gan = get_workload("dcgan")
    g, d = (counter.reference(gan, r) for r in gan.references)
    assert (g, d) == (1_068_928, 663_296)


# Small inputs (and vocabularies) so that each of the 27 workloads trains two steps in about a second.
SMALL = {
    "alexnet": ((3, 63, 63), None), "inception_v3": ((3, 75, 75), None), "deeplab_v3": ((3, 33, 33), None),
    "lenet": ((1, 28, 28), None), "mnist_mlp": ((784,), None), "char_cnn": ((16,), None),
    "rnn_ptb_small": ((8,), 500), "seq2seq": ((5, 4), 300), "transformer": ((5, 4), 300), "bert_base": ((12,), 500),
    "deepspeech": ((8, 494), None), "dcgan": ((3, 16, 16), None), "dqn": ((4, 84, 84), None),
}  # fmt: skip


@pytest.mark.parametrize("name", ZOO)
def test_every_workload_trains_two_steps_with_finite_loss(name):
    torch.set_num_threads(1)  # on a shared 2-core machine more threads only wait for each other
    shape, classes = SMALL.get(name, ((3, 32, 32), None))
    session = get_workload(name).session(2, input_shape=shape, num_classes=classes, seed=1)
    losses = [float(session.train_step()) for _ in range(2)]
    assert all(math.isfinite(v) for v in losses), losses
    assert any(p.grad is not None for p in session.model.parameters())
    session.model.eval()
    session.infer_step()
