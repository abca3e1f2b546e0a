"""The MNN backend for real (MNN 3.6.1): conversion without network or pip, training, inference, cross-checks,
precision, traces and the ``--json`` contract.  Without MNN these fail with the install line (never skip).  Whole
models through the real MNN (conversion, sessions, the worker or the probe in a child process: seconds to tens of
seconds each), so apart from the quick unit tests in tests/unit/backends/mnn/test_mnn.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import require_mnn


def infer_session(model: str, **fields):
    from edgebench.backends.mnn.session import MnnSession
    from edgebench.records.trial import Trial

    return MnnSession(Trial(model=model, backend="mnn", mode="infer", threads=1, **fields))


@pytest.mark.parametrize("fixture", ["lenet_train", "mobilenet_train"])
def test_trainable_tensors_are_the_torch_parameters(fixture, request):
    """Parameter count equal by construction and by check; mobilenet_v2's 52 bias-free convolutions got a zero bias
    from the converter, which is frozen again."""
    session = request.getfixturevalue(fixture)
    assert session.params == session.torch_params
    assert sum(int(np.prod(p.shape)) for p in session.module.parameters if p.op_type == "Trainable") == session.params
    assert session.env["mnn_converter_biases_frozen"] == (52 if fixture == "mobilenet_train" else 0)


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        ("lenet", {}),
        ("mobilenet_v2", {"input_shape": (3, 32, 32), "num_classes": 10}),
        ("resnet50", {"input_shape": (3, 32, 32), "num_classes": 10}),
        ("shufflenet_v2_0.5x", {"input_shape": (3, 32, 32), "num_classes": 10}),
    ],
)
def test_mnn_and_torch_inference_agree(model, fields):
    """Same weights, same inputs: logits agree within 1e-4 of the largest logit (fp32; MNN reorders sums)."""
    require_mnn()
    import torch

    from edgebench.backends.mnn.prepare import torch_task

    session = infer_session(model, batch_size=2, **fields)
    model = torch_task(session.trial)[2].model.eval()  # the model the session was prepared from (same seed)
    with torch.no_grad():
        expected = model(torch.from_numpy(session.inputs)).numpy()
    got = session.outputs()
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max()
    # cold start: the interpreter and its session, timed as the model's load
    assert session.model_load.what.startswith("mnn: Interpreter") and session.model_load.seconds > 0


@pytest.mark.parametrize(
    ("model", "fields"), [("lenet", {}), ("mobilenet_v2", {"input_shape": (3, 32, 32), "num_classes": 10})]
)
def test_every_inference_step_computes_the_trials_batch(model, fields):
    """MNN reuses a session's input tensor for intermediate results, so a step that does not copy the batch in
    again computes on what the last run left there (mobilenet_v2 at 224x224 drifted to denormals, 80x slower
    steps, then zeros): the tenth step's output, plain or traced, is the first's."""
    require_mnn()
    from edgebench.backends.mnn.runtime import read_output

    session = infer_session(model, batch_size=2, trace="layers", **fields)
    first = session.outputs()

    def last_output() -> np.ndarray:
        return read_output(session.mnn, session.interpreter, session.session)

    for _ in range(10):
        session.infer_step()
    assert np.array_equal(last_output(), first)
    recorder = session.trace_recorder()
    recorder.ensure_costs(session.infer_step)
    recorder.start()
    for _ in range(3):
        session.infer_step()
    recorder.stop()
    recorder.remove()
    assert np.array_equal(last_output(), first)


def test_trained_module_in_eval_mode_agrees_with_torch_before_training(mobilenet_train):
    import torch

    from edgebench.backends.mnn.prepare import torch_task

    model = torch_task(mobilenet_train.trial)[2].model.eval()
    with torch.no_grad():
        expected = model(torch.from_numpy(mobilenet_train.inputs)).numpy()
    got = mobilenet_train.outputs()
    mobilenet_train.module.train(True)
    assert np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max()


def test_low_precision_is_reported_as_applied_only_where_it_changes_the_result():
    """fp16 needs the CPU's fp16 arithmetic (MNN prints fp16:0/1); where it has none MNN runs fp32."""
    require_mnn()
    from edgebench.backends.mnn.runtime import supported_features

    session = infer_session("lenet", batch_size=2, precision="fp16")
    features = supported_features(session.env["mnn_device_supports"])
    assert "fp16" in features
    if not features["fp16"]:
        assert session.env["mnn_precision_applied"] is False
    assert isinstance(session.env["mnn_precision_applied"], bool)


def test_inference_trace_has_ops_under_their_torch_modules_with_flops(tmp_path):
    require_mnn()
    from edgebench.records.spans import SpanTable

    session = infer_session("mobilenet_v2", batch_size=1, input_shape=(3, 32, 32), num_classes=10, trace="layers")
    recorder = session.trace_recorder()
    recorder.ensure_costs(session.infer_step)
    recorder.start()
    session.infer_step()
    session.infer_step()
    recorder.stop()
    recorder.remove()
    assert recorder.save(tmp_path / "spans.json") > 0
    table = SpanTable.from_json((tmp_path / "spans.json").read_text())
    # Ops named after an ONNX node's scope (the graph's own output keeps its bare name ``output``)
    ops = [i for i, t in enumerate(table.types) if t.startswith("Convolution") and table.names[i].startswith("/")]
    assert len(ops) >= 50 and all(table.names[table.parents[i]].startswith(("features.", "classifier")) for i in ops)
    assert table.costs is not None and table.costs["forward_flops"][ops].sum() > 1e6
    for label in set(table.label.tolist()):  # spans of a label never overlap; children lie inside parents
        spans = np.sort(np.stack([table.start_ns, table.end_ns], 1)[table.label == label], axis=0)
        assert (spans[1:, 0] >= spans[:-1, 1]).all()


def test_int8_is_full_int8_with_the_accuracy_check():
    """MNN's quantizer, calibrated on 64 real digits: int8 kernels run, and the int8 model keeps most of the fp32
    model's top-1 on the 256 held-out digits (ADMM scales; LeNet's seeded weights)."""
    require_mnn()
    session = infer_session("lenet", batch_size=8, precision="int8")
    record = session.quantization
    assert record["kind"] == "full" and "_tools.mnnquant" in record["method"] and "ADMM" in record["method"]
    assert record["real_data"] and record["compared_samples"] == 256 and record["calibration"].startswith("mnist")
    assert record["top1_agreement"] > 0.8 and record["accuracy_change"] is not None
    ran = next(n for n in record["notes"] if n.startswith("MNN ran"))
    assert int(ran.split()[2]) >= 3  # the two convolutions and the linear layers' 1x1 convolutions, at least
    out = session.outputs()  # the int8 model's output, read as float (its tensor is int8 inside MNN)
    assert out.shape == (8, 10) and np.isfinite(out).all() and np.abs(out).max() < 100
    session.infer_step()
