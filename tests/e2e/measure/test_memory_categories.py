"""Memory by category (the paper's Figure 9), measured on real torch steps of LeNet, and the growth prediction.  The
end-to-end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/measure/test_memory_categories.py.
"""

from __future__ import annotations

from tests.conftest import json_out


def test_run_measures_categories_without_warmup_and_shows_them(cli):
    proc = cli("run", "-m", "lenet", "-b", "8", "--steps", "2", "--warmup", "0", "--infer-steps", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    memory = json_out(proc)["memory"]
    c = memory["by_category"]
    assert c["batch_size"] == 8 and c["input_bytes"] == 8 * 28 * 28 * 4 and c["activations_bytes"] > 0
    assert c["peak_bytes"] == memory["peak_bytes"] and c["peak_includes_runtime"] is True
    trial_id = json_out(proc)["trial_id"]
    shown = cli("show", trial_id)
    assert shown.returncode == 0 and "memory by category (train)" in shown.stdout
    assert "saved activations" in shown.stdout


def test_feasibility_states_a_prediction_and_checks_it(cli):
    proc = cli("feasibility", "-m", "lenet", "--memory-budget", "2GiB", "--batch-sizes", "2,4,16", "--cores", "all",
               "--cooldown", "0s", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "lenet: prediction (from b=2,4:" in proc.stderr and "all fit in 2.0 GiB" in proc.stderr
    (row,) = json_out(proc)["models"]
    assert row["growth_basis"].startswith("from b=2,4")
    last = row["cells"][-1]
    assert last["batch_size"] == 16 and last["prediction"] == "fits" and last["prediction_check"] == "held"
    assert last["predicted_peak_bytes"] > row["cells"][1]["peak_memory_bytes"]


def test_mnn_measures_what_its_api_exposes_and_names_the_rest(cli):
    proc = cli("run", "-m", "lenet", "--backend", "mnn", "-b", "8", "--steps", "2", "--warmup", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json_out(proc)
    c = out["memory"]["by_category"]
    assert c["params_bytes"] == 4 * out["workload"]["params"]  # MNN's own variables: fp32, the same LeNet
    assert c["input_bytes"] == 8 * 28 * 28 * 4 and c["runtime_bytes"] > 0 and c["peak_bytes"] > c["runtime_bytes"]
    assert c["gradients_bytes"] is None and c["activations_bytes"] is None and c["optimizer_bytes"] is None
    assert "not exposed by MNN's Python API" in c["unexposed"][0]


def test_int8_weights_are_named_as_not_counted(cli):
    proc = cli("run", "-m", "lenet", "--mode", "infer", "--precision", "int8", "-b", "4", "--steps", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    c = json_out(proc)["memory"]["by_category"]
    assert c["params_bytes"] is None and c["input_bytes"] == 4 * 28 * 28 * 4
    assert any("int8 weights are packed" in u for u in c["unexposed"])
