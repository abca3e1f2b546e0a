"""A zoo model's ONNX export: cached by what decides its bytes, and a training export that keeps every parameter."""

import os
from pathlib import Path

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


def test_a_torn_export_or_an_edited_sidecar_is_exported_again(tmp_path):
    """Issue 39, caches trusted as found: a torn cached ``.onnx`` became a crashed trial, and a sidecar whose ``path``
    was edited made the backend load another file."""
    import json

    first = export_workload("lenet", batch_size=2, cache_dir=tmp_path)
    good = Path(first.path).read_bytes()
    Path(first.path).write_bytes(good[: len(good) // 2])  # torn
    assert export_workload("lenet", batch_size=2, cache_dir=tmp_path) == first and Path(first.path).read_bytes() == good
    sidecar = Path(first.path).with_suffix(".json")
    sealed = json.loads(sidecar.read_text())
    body = json.loads(sealed["body"])
    sidecar.write_text(json.dumps({**sealed, "body": json.dumps({**body, "path": "/tmp/evil.onnx"})}))
    assert export_workload("lenet", batch_size=2, cache_dir=tmp_path).path == first.path  # its seal broke
    from edgebench.host.files import write_sealed

    write_sealed(sidecar, {**body, "path": "/tmp/evil.onnx"}, sealed["derived_from"])  # even sealed
    assert export_workload("lenet", batch_size=2, cache_dir=tmp_path).path == first.path
