"""The recorded MNN support table (``src/edgebench/backends/mnn/support.json``): it covers the zoo, a few entries
probed again agree with it, and ``edgebench models`` and trial validation read it.  Whole models through the real
MNN (conversion, sessions, the worker or the probe in a child process: seconds to tens of seconds each), so apart
from the quick unit tests in tests/unit/backends/mnn/test_support.py.
"""

from __future__ import annotations

import pytest

from edgebench.backends.mnn import missing_package
from edgebench.backends.mnn.support import probe_in_subprocess, recorded


@pytest.mark.parametrize("model", ["lenet", "char_cnn", "mobilenet_v1"])
def test_probing_again_agrees_with_the_record(model):
    """LeNet (accepted both ways), char_cnn (refused by the backend, no MNN needed) and mobilenet_v1 (its deepest
    batch-norm scales' updates round away in float32 in PyTorch too: accepted) probed again now."""
    if model != "char_cnn" and missing_package():
        pytest.fail(missing_package())
    entry = probe_in_subprocess(model, timeout_s=300)
    expected = recorded()["models"][model]
    assert (entry["infer"], entry["train"]) == (expected["infer"], expected["train"])
    if model == "lenet":
        assert entry["params"] == expected["params"] == 349_980
        assert entry["infer_max_abs_diff"] < 1e-3
