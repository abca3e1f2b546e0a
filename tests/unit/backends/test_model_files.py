"""Model files (``--model path.onnx`` / ``.mnn``) read without frameworks: the feeds from the file then the flags (the
ONNX reader itself: tests/unit/graph/test_onnx_proto.py; runs, refusals and partitions through the command:
tests/e2e/backends/test_model_files.py)."""

from __future__ import annotations

import pytest

from edgebench.backends import model_file as mf
from tests.paths import FIXTURES

FIXTURE = FIXTURES / "models" / "two_inputs.onnx"


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
