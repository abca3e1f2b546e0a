"""``run --trace``, ``layers``, ``trace`` and ``peak`` end to end: the real CLI, worker, sampler and store."""

import json
import os
import stat

import pytest

from edgebench.report.trace_check import check_trace
from edgebench.store import Store
from edgebench.workflows.peak import trial_peak_key
from tests.conftest import store_with_traced_lenet


@pytest.fixture(scope="module")
def cli(cli_factory):
    return cli_factory("layers-trace", columns=200)


def run_json(cli, *args):
    proc = cli("run", "--steps", "3", "--warmup", "1", "--infer-steps", "0", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def traced(cli, traced_lenet):
    """The session's traced LeNet trial (batch 8, three steps, layers and counters), in this module's store."""
    return store_with_traced_lenet(traced_lenet, cli.store_path)


def test_run_with_trace_layers_stores_spans_and_reports_predictability(cli, traced):
    assert traced["status"] == "ok"
    assert traced["trace_summary"]["granularity"] == "layers" and traced["trace_summary"]["labels"] == 14
    assert 0 < traced["trace_summary"]["covered_pct"] <= 100
    assert traced["trace_summary"]["spans"] >= 3 * 2 * 11  # forward and backward of 11 leaves in 3 steps, and more
    p = traced["predictability"]
    assert p["step_time_cv"] == pytest.approx(traced["latency"]["step_ms"]["cv"])
    assert p["steps_for_ci_5pct"] >= 2 and p["step_period_ms"] == pytest.approx(traced["latency"]["step_ms"]["mean"])
    with Store(cli.store) as store:
        assert json.loads(store.series(traced["trial_id"], "spans"))["granularity"] == "layers"


def test_layers_json_per_layer_times_flops_and_no_invented_energy(cli, traced):
    proc = cli("layers", traced["trial_id"], "--json", "--no-measure")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    rows = {r["name"]: r for r in report["rows"]}
    assert report["steps"] == 3 and report["granularity"] == "layers"
    conv = rows["features.0"]
    assert conv["type"] == "Conv2d" and conv["forward_ms"] > 0 and conv["backward_ms"] > 0
    # LeNet conv1 at batch 8: 24x24 outputs, 20 channels, 1x5x5 kernels; no grad-input for the first layer
    assert conv["forward_flops"] == 2 * 8 * 24 * 24 * 20 * 25 == conv["backward_flops"]
    assert conv["achieved_gflops"] == pytest.approx(
        conv["flops"] / ((conv["forward_ms"] + conv["backward_ms"]) / 1e3) / 1e9)  # fmt: skip
    assert sum(r["share_pct"] for r in report["rows"]) + report["other"]["share_pct"] == pytest.approx(100.0)
    assert all(r["energy_j"] is None for r in report["rows"])  # this machine has no power sensor
    assert conv["cpu_util_pct"] is not None and 0 <= conv["cpu_util_pct"] <= 100
    assert report["peak"] is None and conv["peak_pct"] is None


def test_layers_share_of_a_stored_peak(cli, traced):
    with Store(cli.store) as store:
        key = trial_peak_key(store.get(traced["trial_id"]))
        store.save_device_peak({"key": key, "gemm_gflops": 100.0, "copy_gbps": 10.0, "measured_at": "by hand"})
    report = json.loads(cli("layers", traced["trial_id"], "--json", "--no-measure").stdout)
    conv = next(r for r in report["rows"] if r["name"] == "features.3")
    assert report["peak"]["gemm_gflops"] == 100.0
    assert conv["peak_pct"] == pytest.approx(conv["achieved_gflops"])  # achieved / 100 GFLOP/s, in percent
    assert conv["bound"] in ("compute", "memory")


def test_layers_table_roofline_and_depth(cli, traced):
    table = cli("layers", traced["trial_id"][:15], "--no-measure")  # a prefix of the id is enough
    assert table.returncode == 0, table.stderr
    for text in ("features.0", "Conv2d", "bwd ms", "share %", "(other: loss, optimizer, framework)", "no power sensor"):
        assert text in table.stdout
    assert "energy mJ" not in table.stdout
    roof = cli("layers", traced["trial_id"], "--roofline", "--sort", "time", "--top", "3", "--no-measure")
    assert roof.returncode == 0 and "FLOP/B" in roof.stdout and "bound" in roof.stdout
    folded = json.loads(cli("layers", traced["trial_id"], "--depth", "1", "--json", "--no-measure").stdout)
    assert {r["name"] for r in folded["rows"]} <= {"LeNet", "features", "classifier"}
    assert {"features", "classifier"} <= {r["name"] for r in folded["rows"]}


def test_trace_writes_a_valid_chrome_trace(cli, traced, tmp_path):
    out = tmp_path / "trace.json"
    proc = cli("trace", traced["trial_id"], "-o", str(out), "--check")
    assert proc.returncode == 0, proc.stderr
    assert "structural check: ok" in proc.stderr and "Perfetto check skipped" in proc.stderr
    doc = json.loads(out.read_text())
    assert check_trace(doc) == []
    slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    steps = [e for e in slices if e["cat"] == "step"]
    assert len(steps) == 4  # 1 warm-up + 3 measured
    assert len(slices) - len(steps) == traced["trace_summary"]["spans"]
    assert {e["name"] for e in doc["traceEvents"] if e["ph"] == "C"} >= {"cpu0 utilization", "memory available"}


def test_trace_check_runs_perfettos_trace_processor_when_present(cli, traced, tmp_path):
    fake = tmp_path / "bin" / "trace_processor_shell"
    fake.parent.mkdir()
    n = traced["trace_summary"]["spans"] + 4
    fake.write_text(f'#!/bin/sh\necho \'"slices","counters","errors"\'\necho \'{n},100,0\'\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "t.json"
    proc = cli("trace", traced["trial_id"], "-o", str(out), "--check",
               env={"PATH": f"{fake.parent}:{os.environ['PATH']}", "EDGEBENCH_TRACE_PROCESSOR": None})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"Perfetto check: ok: Perfetto imported {n} slices" in proc.stderr


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["layers", "1999"], "TRIAL"),
        (["layers", "TRIAL", "--depth", "-1"], "--depth"),
        (["layers", "TRIAL", "--depth", "99"], "--depth"),  # lenet's deepest module is at depth 1
        (["layers", "TRIAL", "--sort", "size"], "--sort"),
        (["layers", "TRIAL", "--power-channel", "VDD_NOPE"], "--power-channel"),
        (["trace", "TRIAL", "--power-channel", "VDD_NOPE"], "--power-channel"),
        (["trace", "TRIAL", "-o", "/nonexistent-dir/t.json"], "--output"),
        (["trace", "TRIAL", "--check", "--trace-processor", "/nonexistent/tp"], "--trace-processor"),
        (["layers", "TRIAL", "--store", "/nonexistent-dir/s.sqlite"], "--store"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, traced, args, flag):
    args = [traced["trial_id"] if a == "TRIAL" else a for a in args]
    proc = cli(*args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgebench: error:") and flag in lines[0]


def test_layers_of_an_untraced_trial_says_how_to_trace_it(cli):
    plain = run_json(cli, "--model", "lenet", "--batch-size", "4")
    assert plain["trace_summary"] is None and plain["predictability"] is not None
    proc = cli("layers", plain["trial_id"])
    assert proc.returncode == 2 and "--trace layers" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert cli("trace", plain["trial_id"], "-o", "-").returncode == 0  # steps and counters only


def test_trace_ops_gives_an_op_table(cli, tmp_path):
    r = run_json(cli, "--model", "lenet", "--batch-size", "4", "--trace", "ops")
    assert r["trace_summary"]["granularity"] == "ops"
    report = json.loads(cli("layers", r["trial_id"], "--json").stdout)
    names = {row["name"] for row in report["rows"]}
    assert any(n.startswith("aten::") for n in names)
    assert any(row["backward_ms"] > 0 for row in report["rows"]) and any(
        row["optimizer_ms"] > 0 for row in report["rows"]
    )
    assert check_trace(json.loads(cli("trace", r["trial_id"], "-o", "-").stdout)) == []


def test_mobilenet_v2_with_inplace_relu6_traces_end_to_end(cli):
    r = run_json(cli, "--model", "mobilenet_v2", "--input-shape", "3x32x32", "--batch-size", "2", "--trace", "layers")
    assert r["status"] == "ok" and r["trace_summary"]["labels"] == 213
    report = json.loads(cli("layers", r["trial_id"], "--json", "--no-measure").stdout)
    relu6 = [row for row in report["rows"] if row["type"] == "ReLU6"]
    assert len(relu6) == 35 and all(row["backward_ms"] > 0 for row in relu6)
    depthwise = next(row for row in report["rows"] if row["name"] == "features.1.conv.0.0")
    # 32x32 input, stride 2 stem -> 16x16; depthwise 3x3 on 32 channels at batch 2
    assert depthwise["forward_flops"] == 2 * 2 * 16 * 16 * 32 * 9
    assert depthwise["backward_flops"] == 2 * depthwise["forward_flops"]


def test_peak_is_measured_once_and_reused(cli):
    first = cli("peak", "--cores", "0x1", "--threads", "1", "--json")
    assert first.returncode == 0, first.stderr
    figure = json.loads(first.stdout)
    assert figure["gemm_gflops"] > 0 and figure["copy_gbps"] > 0 and "cpu 0|1 threads" in figure["key"]
    proc = cli("peak", "--cores", "0x1", "--threads", "1", "--json")
    again = json.loads(proc.stdout)
    if figure.get("busy"):  # measured beside the suite's other worker: a busy figure is measured again, saying why
        assert "again: the stored one was measured on a busy device" in proc.stderr, proc.stderr
    else:
        assert again["measured_at"] == figure["measured_at"]  # stored, not re-measured
    assert cli("peak", "--cores", "0x100").returncode == 2
