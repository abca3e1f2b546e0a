"""The ONNX reader of our own (no onnx package): what a file declares, checked against the onnx package itself."""

import pytest

from edgebench.graph.onnx_proto import NotOnnx, parse_model
from tests.conftest import require_onnxruntime
from tests.paths import FIXTURES

FIXTURE = FIXTURES / "models" / "two_inputs.onnx"


def test_the_onnx_reader_reads_what_the_file_declares():
    graph = parse_model(FIXTURE.read_bytes())
    assert [(i.name, i.dims, i.dtype) for i in graph.inputs] == [
        ("a", (None, 8), "float32"),
        ("b", (None, 8), "float32"),
    ]
    assert [o.name for o in graph.outputs] == ["y", "s"]
    assert [n.op_type for n in graph.nodes] == ["Add", "MatMul", "Add", "Relu"]
    assert graph.params == 8 * 3 + 3  # the initializers' elements, not their (skipped) bytes
    with pytest.raises(NotOnnx):
        parse_model(b"# not a model\nline two\n")
    with pytest.raises(NotOnnx):
        parse_model(b"")


def test_the_reader_agrees_with_the_onnx_package():
    require_onnxruntime()
    import onnx

    model = onnx.load(str(FIXTURE))
    graph = parse_model(FIXTURE.read_bytes())
    assert [n.name for n in graph.nodes] == [n.name for n in model.graph.node]
    assert [n.outputs for n in graph.nodes] == [tuple(n.output) for n in model.graph.node]
