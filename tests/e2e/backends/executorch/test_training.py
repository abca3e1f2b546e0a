"""ExecuTorch's training API against torch, step by step, on the same model, weights, batch and SGD settings.

The program is the backend's own (:func:`edgebench.backends.executorch.lower.lower_training`, cached in the suite's
derived-files folder) and the step is the backend's (:class:`~edgebench.backends.executorch.session.
TrainingProgram`: the runtime's forward-backward, then its ``get_sgd_optimizer``).  Dropout is off in both (the
runtime draws its own masks).  Without batch norm the two agree to float32 rounding; with it, to the decomposed
batch norm's rounding (~1e-3: torch's own decomposition moves gradients by ~1e-4, research note 6).  Lowering runs in
this process, so these are apart from the quick unit tests.
"""

from __future__ import annotations

import copy

import pytest

from tests.conftest import require_executorch

STEPS = 12


def _lenet(batch: int):
    import torch

    from edgebench.workloads import get_workload

    task = get_workload("lenet").session(batch, seed=0)
    for module in task.model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return task.model, task.inputs, task.targets


def _with_batch_norm(batch: int):
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 7 * 7, 10)
    )
    return model, torch.randn(batch, 3, 16, 16), torch.randint(0, 10, (batch,))


def _program(name: str, model, x, y):
    from edgebench.backends.executorch.lower import cached, lower_training

    key = {"test": "step-by-step against torch", "model": name, "shape": list(x.shape), "dropout": 0}
    return cached(key, f"test-{name}-train", lambda path: lower_training(copy.deepcopy(model), x, y, path))


def _compare(name: str, model, x, y, settings) -> tuple[list[float], list[float], float]:
    """Losses of both over :data:`STEPS` steps, and the largest parameter difference at the end (relative)."""
    import torch

    from edgebench.backends.executorch.runtime import load
    from edgebench.backends.executorch.session import Program, TrainingProgram

    lowered = _program(name, model, x, y)
    runtime = load(1)
    training = TrainingProgram(runtime, Program(runtime, lowered.path, etdump=False), lowered, settings)
    twin = copy.deepcopy(model).train()
    optimizer = torch.optim.SGD(
        twin.parameters(), lr=settings.lr, momentum=settings.momentum, weight_decay=settings.weight_decay
    )
    ours, theirs = [], []
    for _ in range(STEPS):
        ours.append(training.step(x, y))
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(twin(x), y)
        loss.backward()
        optimizer.step()
        theirs.append(float(loss.detach()))
    names = dict(twin.named_parameters())
    worst = max(
        float((p - names[n].detach()).abs().max() / names[n].detach().abs().max())
        for n, p in zip(lowered.parameters, training.parameters, strict=True)
    )
    return ours, theirs, worst


@pytest.fixture(scope="module")
def sgd():
    from edgebench.workloads import get_workload

    return get_workload("lenet").optimizer  # lr 0.01, momentum 0.9, weight decay 5e-4


def test_lenet_trains_like_torch_step_by_step(sgd):
    """The zoo LeNet (dropout off) with its own SGD settings: every step's loss within float32 rounding of
    torch's, the loss falling, the weights the same after the steps (the runtime's SGD is torch's update rule)."""
    require_executorch()
    ours, theirs, worst = _compare("lenet", *_lenet(8), sgd)
    for step, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert abs(a - b) <= 1e-5 * abs(b), f"step {step}: executorch {a} vs torch {b}"
    assert ours[-1] < ours[0] - 0.05
    assert worst < 1e-4


def test_batch_norm_model_trains_like_torch_with_its_buffers_written_in_place(sgd):
    """A model with batch norm: its running statistics are buffer updates the program writes in place, which
    ExecuTorch's TrainingModule counts as outputs (and so pairs names with the wrong tensors); the backend's own
    slicing gets every gradient to its parameter, and the losses follow torch's to the decomposition's rounding."""
    require_executorch()
    model, x, y = _with_batch_norm(4)
    ours, theirs, worst = _compare("bn", model, x, y, sgd)
    for step, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert abs(a - b) <= 1e-3 * abs(b), f"step {step}: executorch {a} vs torch {b}"
    assert ours[-1] < ours[0]
    assert worst < 1e-2


def test_the_maxpool_backward_decomposition_is_what_makes_it_train():
    """Without the decomposition of ``max_pool2d_with_indices_backward``, executorch 1.5.1's portable kernel adds
    into memory it never zeroes: conv1's gradient is garbage from the first step.  When a later ExecuTorch fixes the
    kernel, this fails, saying the workaround can go (research note 6; pytorch/executorch#21686)."""
    require_executorch()
    import numpy as np
    import torch

    from edgebench.backends.executorch import lower
    from edgebench.backends.executorch.runtime import load
    from edgebench.backends.executorch.session import Program

    model, x, y = _lenet(8)
    saved = lower.TRAINING_DECOMPOSITIONS
    key = {"test": "no maxpool decomposition", "shape": list(x.shape)}

    def build(path):
        lower.TRAINING_DECOMPOSITIONS = tuple(d for d in saved if not d.startswith("max_pool"))
        try:
            return lower.lower_training(copy.deepcopy(model), x, y, path)
        finally:
            lower.TRAINING_DECOMPOSITIONS = saved

    lowered = lower.cached(key, "test-lenet-undecomposed", build)
    program = Program(load(1), lowered.path, etdump=False)
    twin = copy.deepcopy(model).train()
    torch.nn.functional.cross_entropy(twin(x), y).backward()
    n = len(lowered.parameters)
    grads = [g.clone() for g in program.call((x, y))[lowered.user_outputs : lowered.user_outputs + n]]
    first = dict(zip(lowered.parameters, grads, strict=True))["features.0.weight"]
    assert not np.allclose(first.numpy(), twin.features[0].weight.grad.numpy(), rtol=1e-3, atol=1e-5), (
        "executorch's max_pool2d_with_indices_backward now matches torch: drop its decomposition in lower.py"
    )
