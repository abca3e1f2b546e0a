"""The predictor on synthetic devices whose true per-layer costs are known: stored traced trials are built from a cost
function, saved in a real store, and the predictor must give the costs back, flag extrapolation and measure itself
honestly; then once on real traced trials of this machine through the command.  The end-to-end half: what runs the
real command, a real worker or another process; the rest is in tests/unit/predict/test_predict.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from edgebench.config.sweep_file import load_config
from edgebench.host.sysfs import SysFS
from edgebench.sweep.plan import plan


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
    code = main(["predict", "--model", "lenet", "--batch-size", "8", "--store", store])
    said = capsys.readouterr()
    # a trial the loaded suite disturbed (the other worker beside it) is passed over, and said so; with all three
    # disturbed, predict refuses in one line rather than learn the neighbours' load
    passed_over = said.err.count("left out: disturbed")
    if passed_over == 3:
        assert code == 2 and "no finished train trials" in said.err, said.err
        return
    assert code == 0, said.err
    assert "lenet batch 8 train, 1 thread(s): predicted step" in said.out
    assert f"learned from {3 - passed_over} traced trials" in said.out, (said.out, said.err)
    if passed_over:  # what follows (its interval, the validation) needs all three
        return
    out = said.out
    assert "learned from 3 traced trials: lenet@2, lenet@4, mnist_mlp@2" in out
    assert "warning: extrapolation: batch size 8 outside the stored 2-4" in out
    assert "untraced step: not calibrated (no untraced trial of a traced configuration is stored" in out
    assert main(["predict", "--model", "lenet", "--batch-size", "8", "--store", store, "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)  # one JSON document on stdout, as every command's --json
    (predicted,) = doc["predictions"]
    assert (predicted["model"], predicted["batch_size"], predicted["basis"]) == ("lenet", 8, "predicted")
    assert predicted["interval"]["low_ms"] <= predicted["step_ms"] <= predicted["interval"]["high_ms"]
    assert len(predicted["learned_from"]) == 3 and predicted["device"]
    assert main(["predict", "--validate", "--store", store, "--json"]) == 0
    assert {c["scheme"] for c in json.loads(capsys.readouterr().out)["validation"]} == {
        "leave-one-model-out", "leave-one-batch-size-out"}  # fmt: skip
    plot = tmp_path / "errors.png"
    assert main(["predict", "--validate", "--plot", str(plot), "--store", store]) == 0
    out = capsys.readouterr().out
    assert "leave-one-model-out" in out and "2 models: median |error|" in out
    assert plot.read_bytes()[:4] == b"\x89PNG"
    assert main(["predict", "--model", "lenet", "--store", store]) == 2
    assert capsys.readouterr().err.strip().startswith("edgebench: error: --batch-size:")
    # --suggest: the candidates are the stored and asked models at the stored and asked batch sizes, less what is
    # stored or asked (mnist_mlp at 4 and 8); the file plans to those layer-traced trials.
    sweep_file = tmp_path / "suggest.yaml"
    assert main(["predict", "--model", "lenet", "--batch-size", "8", "--suggest", "1", "--out", str(sweep_file),
                 "--store", store]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "suggested trials (1 of 2 candidates), best first" in out and f"wrote {sweep_file}" in out
    planned = plan(load_config(sweep_file).config, source=sweep_file, sysfs=SysFS("/nonexistent"), allowed=(0, 1))
    assert [(t.trial.model, t.trial.trace) for t in planned.trials] == [("mnist_mlp", "layers")]
    assert planned.trials[0].trial.batch_size in (4, 8)
    # The partition analyzer on predicted costs: every device figure labelled predicted; mobile only = the step.
    from edgebench.predict.step import predict_step

    step = predict_step("lenet", 8, store=Path(store))
    assert step.basis == "predicted"
    assert main(["partition", "--model", "lenet", "--predicted", "--mode", "train", "--batch-size", "8", "--json",
                 "--store", store]) == 0  # fmt: skip
    analysis = json.loads(capsys.readouterr().out)
    assert analysis["device_basis"] == "predicted" and analysis["cloud_predicted"] is True
    assert analysis["mobile_source"].startswith("PREDICTED: edgebench predict, from 3 traced trials")
    assert analysis["mobile_only"]["mobile_ms"] == pytest.approx(step.step_ms, rel=1e-6)
    assert main(["partition", "--model", "lenet", "--predicted", "--mode", "train", "--batch-size", "8",
                 "--store", store]) == 0  # fmt: skip
    table = capsys.readouterr().out
    assert "PREDICTED device costs" in table and "best (latency) (predicted)" in table
    assert main(["partition", "--model", "lenet", "--predicted", "--objective", "energy", "--store", store]) == 2
    assert "device energy is not predicted per layer" in capsys.readouterr().err
