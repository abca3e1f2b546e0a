"""A zoo model's ONNX export: cached by what decides its bytes, and a training export that keeps every parameter."""

import os

import pytest

from edgebench.graph.export import export_workload
from tests.conftest import require_onnxruntime


def test_exports_are_cached_and_training_exports_keep_every_parameter(onnx_cache):
    require_onnxruntime()  # the onnx package, for the export
    import onnx

    first = export_workload("lenet", batch_size=2)
    mtime = os.stat(first.path).st_mtime_ns
    again = export_workload("lenet", batch_size=2)
    assert again == first and os.stat(first.path).st_mtime_ns == mtime
    training = export_workload("lenet", batch_size=2, training=True)
    assert training.path != first.path and training.params == 349_980
    graph = onnx.load(training.path).graph
    names = {init.name for init in graph.initializer}
    assert set(training.parameter_initializers) <= names
    assert sorted(training.parameter_initializers) == sorted(
        f"{layer}.{kind}" for layer in ("features.0", "features.3", "classifier.1", "classifier.4")
        for kind in ("weight", "bias")
    )  # fmt: skip
    with pytest.raises(ValueError, match="does not take one input tensor"):
        export_workload("dcgan", batch_size=2)
