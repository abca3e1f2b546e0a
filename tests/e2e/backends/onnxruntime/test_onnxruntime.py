"""The ONNX Runtime backend end to end (real onnxruntime, real worker, store and `layers`), its ONNX export, its
profiler spans, and its refusals.  The end-to-end half: what runs the real command, a real worker or another
process; the rest is in tests/unit/backends/onnxruntime/test_onnxruntime.py.
"""

from __future__ import annotations

import json

import pytest

from edgebench.graph.export import export_workload
from edgebench.host.cpu import int8_cpu_features
from edgebench.host.sysfs import SysFS
from edgebench.records.spans import SpanTable
from edgebench.store import Store


@pytest.fixture(scope="module")
def cli(cli_factory, onnx_cache):
    return cli_factory("ort-store", columns=200)


def run_json(cli, *args):
    proc = cli("run", "--backend", "onnxruntime", "--mode", "infer", "--steps", "3", "--warmup", "1", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def traced(cli):
    """mobilenet_v2 at a small input, fp32, profiled by ORT."""
    return run_json(cli, "--model", "mobilenet_v2", "--input-shape", "3x32x32", "-b", "2", "--trace", "layers")


@pytest.fixture(scope="module")
def lenet_int8(cli):
    return run_json(cli, "--model", "lenet", "-b", "4", "--precision", "int8", "--threads", "1", "--cores", "0x1")


def test_an_inference_trial_records_mode_threads_and_optimisation_level(traced):
    assert (
        traced["status"] == "ok" and traced["trial"]["mode"] == "infer" and traced["trial"]["backend"] == "onnxruntime"
    )
    assert traced["latency"]["step_ms"] == traced["latency"]["infer_ms"] and traced["latency"]["step_ms"]["n"] == 3
    assert traced["latency"]["throughput_sps"] == pytest.approx(
        2 * 1e3 / traced["latency"]["step_ms"]["mean"], rel=1e-6
    )
    assert traced["workload"]["params"] == export_workload("mobilenet_v2", batch_size=2, input_shape=(3, 32, 32)).params
    env = traced["device"]["extra"]
    assert env["ort_graph_optimization_level"] == "ORT_ENABLE_ALL"
    assert env["ort_intra_op_threads"] == traced["trial"]["threads"]
    assert "torch" not in env  # the worker ran ORT alone; torch exported in a child process
    assert traced["loss"] is None and traced["quantization"] is None
    cold = traced["cold_start"]  # the session's creation; the first inference before the profiler's counting one
    assert cold["model_load_what"].startswith("onnxruntime: InferenceSession") and cold["model_load_s"] > 0
    assert cold["first_step_mode"] == "infer" and cold["first_step_counted_as"] == "infer_warmup"


def test_the_profile_is_a_layer_table_that_layers_reads(cli, traced):
    with Store(cli.store) as db:
        spans = SpanTable.from_json(db.series(traced["trial_id"], "spans"))
    assert spans.granularity == "layers" and spans.names[0] == "MobileNetV2"
    modules = {n for n, t in zip(spans.names, spans.types, strict=True) if t in ("Conv2d", "Sequential", "Linear")}
    assert "features" in modules and "classifier" in modules
    fused = [t for t in spans.types if t.endswith("(fused)")]
    assert fused  # ORT fused Conv + ReLU6 (named after the activation), labelled as such
    assert traced["trace_summary"]["covered_pct"] > 50
    proc = cli("layers", traced["trial_id"], "--depth", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["rows"]
    assert {"features", "classifier"} <= {r["name"] for r in rows}
    assert sum(r["forward_ms"] for r in rows) > 0 and all(r["backward_ms"] == 0 for r in rows)


def test_the_trace_and_the_partition_analyzer_read_the_profile(cli, traced, tmp_path):
    out = tmp_path / "trace.json"
    proc = cli("trace", traced["trial_id"], "-o", str(out), "--check")
    assert proc.returncode == 0, proc.stderr
    assert "structural check: ok" in proc.stdout + proc.stderr
    slices = [e for e in json.loads(out.read_text())["traceEvents"] if e.get("ph") == "X"]
    assert any(e["name"].startswith("features.") for e in slices)
    proc = cli("partition", "--model", "mobilenet_v2", "--trial", traced["trial_id"], "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)


def test_int8_carries_its_accuracy_check_and_the_cpu_features(lenet_int8):
    q = lenet_int8["quantization"]
    assert lenet_int8["trial"]["precision"] == "int8" and q["kind"] == "full" and "QDQ" in q["method"]
    assert q["real_data"] is True and q["calibration"].startswith("mnist:")
    assert 0.5 <= q["top1_agreement"] <= 1 and q["accuracy_change"] == pytest.approx(
        q["int8_accuracy"] - q["fp32_accuracy"]
    )
    assert q["cpu_int8_features"] == int8_cpu_features(SysFS("/"))
    assert lenet_int8["device"]["extra"]["ort_thread_affinities"] is None  # one thread: no pool to pin
