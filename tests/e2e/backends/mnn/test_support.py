"""The recorded MNN support table (``src/edgebench/backends/mnn/support.json``): it covers the zoo, a few entries
probed again agree with it, and ``edgebench models`` and trial validation read it.  The end-to-end half: what runs
the real command, a real worker or another process; the rest is in tests/unit/backends/mnn/test_support.py.
"""

from __future__ import annotations

import json


def test_models_lists_mnn_refusals(cli):
    run = cli("models", "--no-measure", "lenet", "char_cnn")
    assert run.returncode == 0, run.stderr
    assert "MNN backend" in run.stdout and "char_cnn (train, infer)" in run.stdout
    assert "lenet (" not in run.stdout
    listed = json.loads(cli("models", "--no-measure", "--json", "lenet").stdout)
    assert listed[0]["mnn"] == {"infer": None, "train": None}
