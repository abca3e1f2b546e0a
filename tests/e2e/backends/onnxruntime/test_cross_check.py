"""Same weights, same inputs: torch and ONNX Runtime inference agree, within a stated tolerance per precision.

fp32: the exported graph computes what the PyTorch model computes, up to float reassociation (ORT fuses batch norm
into convolutions and reorders sums): ``|torch - ort| <= 1e-4 * max|torch| + 1e-6`` on every output.

int8 (each runtime's own static quantization, calibrated on the same inputs): quantization changes outputs by
design, so the bound is against fp32: top-1 agreement with fp32 of at least 80% on the 256 comparison inputs and
no output further from fp32 than half of the fp32 outputs' range.  Models: lenet (real MNIST calibration),
squeezenet at 3x32x32; mobilenet_v2 at fp32 only (its seeded outputs are ~1e-10, so an int8 top-1 is noise).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import require_onnxruntime

require_onnxruntime()

import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

from edgebench.backends.quantize import calibration  # noqa: E402
from edgebench.graph.export import build_module, export_workload  # noqa: E402
from edgebench.records.trial import Trial  # noqa: E402

BATCH = 4
FP32_RTOL, FP32_ATOL = 1e-4, 1e-6
INT8_MIN_AGREEMENT, INT8_MAX_DIFF_OF_RANGE = 0.8, 0.5
MODELS = {"lenet": (1, 28, 28), "mobilenet_v2": (3, 32, 32), "squeezenet": (3, 32, 32)}


@pytest.fixture(scope="module")
def exported(onnx_cache):
    return {name: export_workload(name, batch_size=BATCH, input_shape=shape) for name, shape in MODELS.items()}


@pytest.mark.parametrize("name", list(MODELS))
def test_fp32_outputs_agree(exported, name):
    model = exported[name]
    module, inputs = build_module(name, BATCH, model.input_shape, model.num_classes, 0, False)
    assert sum(p.numel() for p in module.parameters()) == model.params  # the same model, by construction
    with torch.no_grad():
        expected = module(inputs).numpy()
    session = ort.InferenceSession(model.path, providers=["CPUExecutionProvider"])
    got = session.run(None, {model.input_name: inputs.numpy()})[0]
    assert got.shape == expected.shape
    bound = FP32_RTOL * float(np.abs(expected).max()) + FP32_ATOL
    assert float(np.abs(got - expected).max()) <= bound


@pytest.mark.parametrize("name", ["lenet", "squeezenet"])
def test_int8_of_each_runtime_stays_within_the_int8_bound(exported, name):
    from edgebench.backends.onnxruntime.prepare import quantize as ort_quantize
    from edgebench.backends.torch.int8 import quantize as torch_quantize

    model = exported[name]
    trial = Trial(model=name, mode="infer", precision="int8", batch_size=BATCH, input_shape=model.input_shape)
    _, ort_record = ort_quantize(model, trial)
    module, inputs = build_module(name, BATCH, model.input_shape, model.num_classes, 0, False)
    calib = calibration(name, model.input_shape, preset=None, data=None, seed=0)
    _, torch_record = torch_quantize(module, inputs, calib, BATCH)
    assert calib.real is (name == "lenet")  # lenet's preset ships real digits
    for record in (ort_record, torch_record):
        assert record["compared_samples"] == 256 and record["real_data"] is calib.real
        assert record["top1_agreement"] >= INT8_MIN_AGREEMENT
        assert record["max_abs_output_diff"] > 0  # it did quantize
    with torch.no_grad():  # the fp32 outputs' range over the comparison inputs: the same bound for both runtimes
        scale = float(np.ptp(module.eval()(torch.from_numpy(calib.compare)).numpy()))
    for record in (ort_record, torch_record):
        assert record["max_abs_output_diff"] <= INT8_MAX_DIFF_OF_RANGE * scale
    if calib.real:
        for record in (ort_record, torch_record):
            change = record["int8_accuracy"] - record["fp32_accuracy"]
            assert record["accuracy_change"] == pytest.approx(change)
