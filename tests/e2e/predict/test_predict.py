"""The predictor on synthetic devices whose true per-layer costs are known: stored traced trials are built from a cost
function, saved in a real store, and the predictor must give the costs back, flag extrapolation and measure itself
honestly; then once on real traced trials of this machine through the command.  The end-to-end half: what runs the
real command, a real worker or another process; the rest is in tests/unit/predict/test_predict.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_real_traced_trials_of_this_machine(tmp_path, capsys):
    """Three tiny traced trials of this machine (two models), then the command in this process."""
    from edgebench.cli import main

    store = str(tmp_path / "real.sqlite")
    exe = Path(sys.executable).parent / "edgebench"
    for model, batch in (("lenet", "2"), ("lenet", "4"), ("mnist_mlp", "2")):
        done = subprocess.run([str(exe), "run", "--model", model, "--batch-size", batch, "--steps", "3", "--warmup",
                               "1", "--infer-steps", "0", "--threads", "1", "--trace", "layers", "--store", store],
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stderr
    capsys.readouterr()
    assert main(["predict", "--model", "lenet", "--batch-size", "8", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "lenet batch 8 train, 1 thread(s): predicted step" in out
    assert "learned from 3 traced trials: lenet@2, lenet@4, mnist_mlp@2" in out
    assert "warning: extrapolation: batch size 8 outside the stored 2-4" in out
    plot = tmp_path / "errors.png"
    assert main(["predict", "--validate", "--plot", str(plot), "--store", store]) == 0
    out = capsys.readouterr().out
    assert "leave-one-model-out" in out and "2 models: median |error|" in out
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert main(["predict", "--model", "lenet", "--store", store]) == 2
    assert capsys.readouterr().err.strip().startswith("edgebench: error: --batch-size:")
