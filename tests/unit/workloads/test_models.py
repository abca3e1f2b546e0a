"""The MNN-based suite's five CNNs: published sizes, the suite's optimiser settings, and a loss that falls."""

import math

import pytest
import torch
from torch import nn

from edgebench.registry import MODELS, UnknownName
from edgebench.workloads import get_workload

FIVE = ["lenet", "googlenet", "squeezenet", "alexnet", "mobilenet_v2"]


def n_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("name", FIVE)
def test_parameter_count_matches_reference(name):
    workload = get_workload(name)
    ref = next(r for r in workload.references if r.quantity == "params")  # the first is the standard figure
    classes = 1000 if "1000" in ref.config else workload.num_classes
    assert n_params(workload.build_model(classes, workload.input_shape)) == pytest.approx(ref.value, rel=0.01)


def test_the_suite_input_and_heads():
    assert get_workload("lenet").input_shape == (1, 28, 28) and get_workload("lenet").num_classes == 10
    for name in ("googlenet", "squeezenet", "alexnet"):
        assert get_workload(name).input_shape == (3, 224, 224) and get_workload(name).num_classes == 10
    mobilenet = get_workload("mobilenetv2")
    assert mobilenet.num_classes == 1001
    assert (mobilenet.optimizer.lr, mobilenet.optimizer.weight_decay, mobilenet.optimizer.schedule) == (
        1e-5,
        4e-5,
        "constant",
    )


def test_inv_learning_rate_policy():
    session = get_workload("lenet").session(2)
    for _ in range(3):
        session.train_step()
    assert session.optimizer.param_groups[0]["lr"] == pytest.approx(0.01 * (1 + 1e-4 * 3) ** -0.75)
    assert session.optimizer.param_groups[0]["momentum"] == 0.9
    assert session.optimizer.param_groups[0]["weight_decay"] == 5e-4


def freeze_dropout(model: nn.Module) -> None:
    """Dropout draws a new mask each step; with it off, the loss on a fixed batch must fall monotonically."""
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0


@pytest.mark.parametrize("name", FIVE)
def test_loss_is_finite_and_falls_on_a_fixed_batch(name):
    shape = (1, 28, 28) if name == "lenet" else (3, 64, 64)
    session = get_workload(name).session(4, input_shape=shape)
    freeze_dropout(session.model)
    losses = [float(session.train_step()) for _ in range(4)]
    assert all(math.isfinite(v) for v in losses)
    assert losses[-1] < losses[0]


def test_infer_step_runs_without_grad():
    session = get_workload("lenet").session(3)
    session.model.eval()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: pytest.fail("saved a tensor"), lambda t: t):
        session.infer_step()


def test_aliases_and_unknown_names():
    assert MODELS.canonical("MobileNetV2") == "mobilenet_v2"
    assert MODELS.canonical("inception_v1") == "googlenet"
    with pytest.raises(UnknownName, match="choose one of: lenet"):
        MODELS.canonical("resnet9000")
