"""Model files (``--model path.onnx`` / ``.mnn``) read without frameworks: the declared inputs, the feeds from the file
then the flags (runs, refusals and partitions through the command: tests/e2e/backends/test_model_files.py)."""

from __future__ import annotations

import pytest

from edgebench.backends import model_file as mf
from edgebench.backends.onnx_proto import NotOnnx, parse_model
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


def test_feeds_come_from_the_file_then_the_flags():
    info = mf.inspect(FIXTURE)
    feeds, batch = mf.resolve_feeds(info, batch_size=None, input_name=None, input_shape=None)
    assert batch == 1 and [f.dims for f in feeds] == [(1, 8), (1, 8)]  # an open batch, not given: 1
    feeds, batch = mf.resolve_feeds(info, batch_size=5, input_name=None, input_shape=None)
    assert batch == 5 and [f.dims for f in feeds] == [(5, 8), (5, 8)]
    with pytest.raises(ValueError, match="fixes dimension 1 at 8"):
        mf.resolve_feeds(info, batch_size=5, input_name="a", input_shape=(4,))
    with pytest.raises(ValueError, match="name it with --input-name"):
        mf.resolve_feeds(info, batch_size=5, input_name=None, input_shape=(8,))
    with pytest.raises(ValueError, match="no input 'c'; its inputs: a, b"):
        mf.resolve_feeds(info, batch_size=5, input_name="c", input_shape=None)
    tree = mf.scope_tree([n.name for n in info.nodes], "two_inputs")
    assert tree["names"] == ["two_inputs", "mix", "fc", "act"] and tree["parents"] == [-1, 0, 0, 0]
