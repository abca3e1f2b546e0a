"""The recorded MNN support table (``src/edgebench/backends/mnn/support.json``): it covers the zoo, a few entries
probed again agree with it, and ``edgebench models`` and trial validation read it."""

from __future__ import annotations

import importlib.metadata

import pytest

from edgebench.backends.mnn import missing_package
from edgebench.backends.mnn.support import mnn_support, recorded, refusal
from edgebench.registry import MODELS


def test_the_record_covers_every_zoo_model_with_the_installed_mnn():
    record = recorded()
    assert set(record["models"]) == set(MODELS.names())
    if not missing_package():
        assert record["mnn"] == importlib.metadata.version("MNN")
    for name, entry in record["models"].items():
        assert set(entry) >= {"infer", "train"}, name
        if entry.get("by") == "mnn" and entry["train"] is None:
            assert entry["params"] > 0  # trained, with every tensor a PyTorch parameter


def test_refusal_reads_the_task_and_the_record():
    assert "language_model" in refusal("char_cnn", "infer")
    assert "rmsprop" in refusal("inception_v3", "train") and refusal("inception_v3", "infer") is None
    assert refusal("lenet", "train") is None
    support = mnn_support(["lenet", "dcgan"])
    assert support["lenet"] == {"infer": None, "train": None}
    assert "gan" in support["dcgan"]["train"]


def test_a_timed_out_probe_is_not_a_refusal(monkeypatch):
    from edgebench.backends.mnn import support

    record = {
        "mnn": importlib.metadata.version("MNN") if not missing_package() else "3.6.1",
        "models": {
            "vgg16": {"infer": "probe timed out after 900 s", "train": "probe timed out after 900 s"},
            "squeezenet": {"by": "mnn", "infer": None, "train": "MNN's optimizer step updated 0 of 52"},
        },
    }
    monkeypatch.setattr(support, "recorded", lambda: record)
    assert support.refusal("vgg16", "train") is None  # let the user try
    assert support.mnn_support(["vgg16"])["vgg16"]["train"].startswith("unknown: probe timed out")
    if not missing_package():
        assert "updated 0 of 52" in support.refusal("squeezenet", "train")
    assert support.refusal("squeezenet", "infer") is None
    assert support.mnn_support(["lenet"])["lenet"]["infer"].startswith("not probed")


def test_an_update_below_float32_resolution_is_no_missing_gradient():
    """A scale of 1.0 whose gradient is ~1e-9 keeps its value after PyTorch's own float32 step, as an unused
    parameter does: the probe does not count either against MNN; a parameter with a real gradient changes."""
    import types

    import torch
    from torch import nn

    from edgebench.backends.mnn.support import _torch_unchanged

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.scale = nn.Parameter(torch.ones(1))
            self.unused = nn.Parameter(torch.ones(1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(x) * (1 + 1e-9 * (self.scale - 1))

    torch.manual_seed(0)
    batch = types.SimpleNamespace(inputs=torch.randn(2, 4).numpy(), targets=torch.tensor([0, 2]).numpy())
    assert _torch_unchanged(Tiny(), batch, 0.01) == {"scale", "unused"}


def test_a_probe_is_not_refused_by_the_record_it_rewrites(monkeypatch):
    """The record refuses shufflenet_v2's training; a re-probe must run the trial, not record that refusal."""
    from edgebench.backends.mnn.support import PROBING_ENV

    if missing_package():
        pytest.fail(missing_package())
    assert "stages.4.branch2" in refusal("shufflenet_v2_0.5x", "train")
    monkeypatch.setenv(PROBING_ENV, "1")
    assert refusal("shufflenet_v2_0.5x", "train") is None
    assert "language_model" in refusal("char_cnn", "train")  # the backend's own refusals stand
