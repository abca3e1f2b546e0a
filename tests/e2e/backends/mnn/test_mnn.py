"""The MNN backend for real (MNN 3.6.1): conversion without network or pip, training, inference, cross-checks,
precision, traces and the ``--json`` contract.  Without MNN these fail with the install line (never skip).  The end-
to-end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/backends/mnn/test_mnn.py.
"""

from __future__ import annotations

import json

from tests.conftest import require_mnn


def test_run_json_is_not_corrupted_by_mnn_prints(cli):
    """MNN printf()s to fd 1 (``The device supports...``, converter progress); stdout must stay one JSON document."""
    require_mnn()
    run = cli(
        "run",
        "--backend",
        "mnn",
        "--model",
        "lenet",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--batch-size",
        "4",
        "--infer-steps",
        "2",
        "--json",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert result["status"] == "ok" and result["trial"]["backend"] == "mnn" and result["workload"]["params"] == 349_980
    assert result["device"]["mnn"] == "3.6.1" and result["loss"]["finite"]
    assert not any(line.startswith("The device supports") for line in run.stdout.splitlines())


def test_infer_mode_run_json(cli):
    require_mnn()
    run = cli(
        "run",
        "--backend",
        "mnn",
        "--model",
        "lenet",
        "--mode",
        "infer",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--batch-size",
        "2",
        "--json",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert result["status"] == "ok" and result["trial"]["mode"] == "infer" and result["latency"]["step_ms"]["n"] == 2


def test_a_model_mnn_cannot_run_is_a_usage_error(cli):
    run = cli("run", "--backend", "mnn", "--model", "char_cnn", "--json")
    assert run.returncode == 2
    assert "classification" in run.stderr and run.stdout == "" and len(run.stderr.strip().splitlines()) == 1
