"""MNN training and quantization on a converted LeNet: the optimizer needs lazy evaluation to train every layer, the
training trace says what MNN cannot measure, and a graph the quantizer refuses falls back to weight-only int8.
Each converts a model (seconds), so they are apart from the quick unit tests in tests/unit/backends/mnn/test_mnn.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import require_mnn


def _steps(session, lazy: bool) -> tuple[list[float], int]:
    """Eight steps with ``lazy_eval(lazy)``: the losses, and how many parameter tensors changed."""
    F, nn = session.mnn.expr, session.mnn.nn
    from edgebench.backends.mnn.quiet import stdout_to_stderr

    with stdout_to_stderr():
        F.lazy_eval(lazy)
        try:
            before = [np.array(p.read(), copy=True) for p in session.module.parameters]
            losses = []
            for _ in range(8):
                loss = nn.loss.cross_entropy(F.softmax(session.module.forward(session._x)), session._onehot)
                losses.append(float(loss.read()))
                session.optimizer.step(loss)
            after = [np.array(p.read(), copy=True) for p in session.module.parameters]
            return losses, sum(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))
        finally:
            F.lazy_eval(True)


def test_without_lazy_eval_the_optimizer_does_nothing_with_it_every_layer_trains(lenet_train):
    """Every one of LeNet's 8 parameter tensors changes: with MNN's Flatten in the graph only the 4 of the linear
    layers would (MNN has no gradient for Flatten; the conversion rewrites it as a Reshape)."""
    losses, changed = _steps(lenet_train, lazy=False)
    assert changed == 0 and len(set(losses)) == 1  # silently: no error, no update
    losses, changed = _steps(lenet_train, lazy=True)
    assert changed == 8 and losses[-1] < losses[0] - 0.05
    assert lenet_train.env["mnn_ops_rewritten"] == {"Flatten": 1, "GlobalAveragePool": 0}


def test_training_trace_says_what_mnn_cannot_measure(lenet_train, tmp_path):
    from edgebench.backends.mnn.trace import TrainingTraceRecorder

    recorder = TrainingTraceRecorder(lenet_train).install()
    recorder.start()
    lenet_train.train_step()
    recorder.stop()
    recorder.remove()
    table = recorder.table()
    assert len(table) == 2 and "no per-op callback" in table.notes["spans"]


def test_a_graph_the_quantizer_refuses_falls_back_to_weight_only(tmp_path, monkeypatch):
    """The quantizer's refusal (here: a file that is no model), from the process it runs in, is MNN's reason; int8
    is then the converter's weight-only int8, labelled so, with that reason in its notes."""
    require_mnn()
    import torch

    from edgebench.backends.mnn import quantize
    from edgebench.backends.mnn.convert import ConversionError
    from edgebench.backends.mnn.runtime import load
    from edgebench.graph.export import export_module
    from edgebench.records.trial import Trial
    from edgebench.workloads import get_workload

    (tmp_path / "bad.mnn").write_bytes(b"not a model")
    with pytest.raises(ConversionError, match=r"quantizer refused bad\.mnn"):
        samples = np.zeros((2, 1, 28, 28), np.float32)
        quantize.quantize_in_process_of_its_own(tmp_path / "bad.mnn", tmp_path / "out.mnn", samples)
    torch.manual_seed(0)
    export_module(get_workload("lenet").build_model(10, (1, 28, 28)), torch.zeros(8, 1, 28, 28), tmp_path / "m.onnx")
    refusal = ConversionError("MNN's quantizer refused fp32.mnn: an op it cannot quantize")

    def refuse(*args):
        raise refusal

    monkeypatch.setattr(quantize, "quantize_in_process_of_its_own", refuse)
    trial = Trial(model="lenet", backend="mnn", mode="infer", batch_size=8, precision="int8")
    inputs = np.zeros((8, 1, 28, 28), np.float32)
    path, record = quantize.int8_model(load()[0], tmp_path / "m.onnx", tmp_path, trial, (1, 28, 28), inputs)
    assert path.name == "infer.mnn" and record["kind"] == "weight_only" and "--weightQuantBits 8" in record["method"]
    assert any(str(refusal) in note for note in record["notes"]) and record["calibration"].startswith("none")
    assert record["top1_agreement"] > 0.9
