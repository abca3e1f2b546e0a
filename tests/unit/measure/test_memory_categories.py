"""Memory by category (the paper's Figure 9), measured on real torch steps of LeNet, and the growth prediction."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.agents.python.feasibility import Cell
from edgebench.backends.torch.memory import StepWatch, StorageSet
from edgebench.backends.torch.session import TorchSession
from edgebench.config.trial import make_trial
from edgebench.measure.memory_growth import fit_growth
from edgebench.records.memory import MemoryByCategory
from edgebench.report.memory import category_text


def categorized(batch: int, mode: str = "train") -> tuple[TorchSession, MemoryByCategory]:
    session = TorchSession(make_trial(model="lenet", batch_size=batch, mode=mode, threads=1))
    if mode == "infer":
        session.to_inference()
    categorizer = session.memory_categorizer()
    step = session.infer_step if mode == "infer" else session.train_step
    wrapped = categorizer.categorizing(step)
    wrapped()
    first = categorizer.result
    wrapped()  # later calls are plain steps: the first answer stays
    assert categorizer.result is first and first is not None
    return session, first


def test_training_categories_add_up_for_lenet():
    session, c8 = categorized(8)
    _, c16 = categorized(16)
    params = sum(p.numel() for p in session.model.parameters())
    assert c8.params_bytes == 4 * params == c8.gradients_bytes  # fp32 weights, one gradient each
    # LeNet trains with SGD and momentum: one buffer per parameter, the parameters' size again.
    assert c8.optimizer_bytes == 4 * params
    assert c8.input_bytes == 8 * 1 * 28 * 28 * 4 and c16.input_bytes == 2 * c8.input_bytes
    assert c8.activations_bytes is not None and c16.activations_bytes is not None
    # Saved activations are per-sample feature maps: doubling the batch doubles them (a few scalars aside).
    assert 1.9 < c16.activations_bytes / c8.activations_bytes < 2.1
    assert c8.activations_bytes > c8.input_bytes  # feature maps of several layers, not the input again
    assert c8.runtime_bytes is not None and c8.runtime_bytes > 50 * 2**20  # the interpreter and torch's libraries
    assert c8.params_bytes == c16.params_bytes and c8.optimizer_bytes == c16.optimizer_bytes
    assert c8.unexposed == [] and c8.peak_bytes is None  # the peak comes from the measured phase, later


def test_inference_has_no_gradients_optimizer_or_saved_activations():
    _, c = categorized(4, mode="infer")
    assert c.mode == "infer" and c.input_bytes == 4 * 28 * 28 * 4 and c.params_bytes
    assert c.gradients_bytes is None and c.optimizer_bytes is None and c.activations_bytes is None
    assert c.unexposed and "inference" in c.unexposed[0]
    assert "gradients -" in category_text(c) and "not measured" in category_text(c)


def test_saved_tensors_count_each_storage_once_and_leave_out_parameters_and_input():
    layer = nn.Linear(6, 6)
    x = torch.randn(5, 6)

    def step() -> None:
        h = torch.tanh(layer(x))  # linear saves x and the weight; tanh saves its output
        # mul saves h again through a view (one storage) and the new tensor repeat made.
        (h.view(30).view(5, 6) * h[:, :3].repeat(1, 2)).sum().backward()

    watch = StepWatch(StorageSet(layer.parameters()))
    watch.run(step)
    assert watch.inputs.nbytes == 5 * 6 * 4  # the tensor fed to the outermost module
    assert watch.activations_bytes == 5 * 6 * 4 * 2  # h once, though saved twice + repeat's output


def cat(batch: int, growing: int, peak: int) -> MemoryByCategory:
    return MemoryByCategory(batch_size=batch, input_bytes=0, activations_bytes=growing, peak_bytes=peak)


def test_growth_predicts_from_two_batch_sizes_with_the_larger_growth():
    assert fit_growth([cat(8, 800, 10_000)]) is None
    growth = fit_growth([cat(16, 1600, 10_400), cat(8, 800, 10_000), cat(32, 1, 1)])
    assert growth is not None and (growth.small_batch, growth.large_batch) == (8, 16)
    assert growth.categories_per_sample_bytes == 100 and growth.peak_per_sample_bytes == 50
    assert growth.predicted_peak_bytes(116) == 10_400 + 100 * 100
    assert "input + activations used" in growth.basis()
    steep = fit_growth([cat(8, 800, 10_000), cat(16, 1600, 12_000)])
    assert steep is not None and steep.predicted_peak_bytes(17) == 12_250 and "peak used" in steep.basis()


def test_a_prediction_is_checked_against_what_ran():
    assert Cell(64, "ok", prediction="fits").prediction_check == "held"
    assert Cell(64, "infeasible", prediction="fits").prediction_check == "missed"
    assert Cell(64, "oom", prediction="will not fit").prediction_check == "held"
    assert Cell(64, "skipped", prediction="will not fit").prediction_check == "not run"
    assert Cell(64, "ok").prediction_check is None
