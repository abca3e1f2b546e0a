"""The LiteRT backend end to end: the real command converts LeNet (once per test session, into the suite's
derived-files cache), runs it traced through the op profiler and at every reduced precision through the frameworks
table, runs the user's .tflite file and DNNTune's TFLite configuration, and reads the trials back with `layers`,
`trace`, `partition`, `compare` and the MNN suite's export.  In-process checks: tests/unit/backends/litert/.

Every LeNet trial here runs at the input and batch of the docs' frameworks example (3x32x32, batch 1), so one
conversion serves both stages.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from edgebench.records.spans import SpanTable
from edgebench.store import Store
from tests.conftest import require_litert
from tests.paths import FIXTURES

require_litert()

#: LeNet as the docs' frameworks example runs it: its conversion is made once for both test stages.
LENET = ("--model", "lenet", "--input-shape", "3x32x32", "--batch-size", "1")
TINY = FIXTURES / "models" / "tiny_cnn.tflite"


@pytest.fixture(scope="module")
def cli(cli_factory):
    return cli_factory("litert-store", columns=200)


@pytest.fixture(scope="module")
def traced(cli):
    """LeNet fp32 traced by LiteRT's op profiler (this converts it, the first time in a session)."""
    args = ("run", "--backend", "litert", "--mode", "infer", *LENET, "--steps", "3", "--warmup", "1", "--idle", "0",
            "--trace", "layers", "--json")  # fmt: skip
    proc = cli(*args, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # one document: nothing of LiteRT or its converter reached stdout


@pytest.fixture(scope="module")
def reduced(cli):
    """LeNet at fp16, int8 and int8-dynamic, as cells of the frameworks table."""
    args = ("frameworks", "--models", "lenet", "--input-shape", "3x32x32", "--backends", "litert", "--precisions",
            "fp16,int8,int8-dynamic", "--steps", "2", "--warmup", "1", "--json")  # fmt: skip
    out = cli.json(*args, timeout=600)
    with Store(cli.store) as db:
        stored = {r.trial_id: r for r in db.trials()}
    return {c["precision"]: (c, stored[c["trial_id"]]) for c in out["cells"]}


def test_a_traced_trial_records_the_runtime_the_load_and_the_conversion(traced):
    assert traced["status"] == "ok", traced["reason"]
    assert (traced["trial"]["backend"], traced["trial"]["mode"], traced["latency"]["step_ms"]["n"]) == (
        "litert", "infer", 3)  # fmt: skip
    env = traced["device"]["extra"]
    assert traced["device"]["litert"] == env.get("litert", traced["device"]["litert"]) and traced["device"]["litert"]
    assert env["litert_api"].startswith("CompiledModel through libLiteRt.so's C API, profiler on")
    assert env["litert_conversion"].startswith("litert-torch ") and env["litert_worker_imported_torch"] is False
    assert env["litert_threads"] == traced["trial"]["threads"] and env["litert_model_bytes"] > 0
    assert env["litert_inputs"]["serving_default_args_0"] == {"shape": [1, 3, 32, 32], "dtype": "float32"}
    cold = traced["cold_start"]
    assert cold["model_load_what"].startswith("litert: compiled model") and cold["model_load_s"] > 0
    from edgebench.graph.export import build_module

    module, _ = build_module("lenet", 1, (3, 32, 32), 10, 0, False)
    assert traced["workload"]["params"] == sum(p.numel() for p in module.parameters())


def test_the_op_profile_is_a_layer_table_that_layers_trace_and_partition_read(cli, traced, tmp_path):
    with Store(cli.store) as db:
        spans = SpanTable.from_json(db.series(traced["trial_id"], "spans"))
    assert spans.granularity == "layers" and spans.names[0] == "LeNet"
    assert spans.notes["xnnpack_operators"] == spans.notes["xnnpack_operators_matched"] > 0
    assert {"features.0", "features.3", "classifier.1"} <= set(spans.names)
    assert any(t.startswith("Convolution (NHWC, F32)") for t in spans.types)
    proc = cli("layers", traced["trial_id"], "--depth", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)["rows"]}
    assert {"features", "classifier"} <= set(rows) and rows["features"]["forward_ms"] > 0
    out = tmp_path / "trace.json"
    proc = cli("trace", traced["trial_id"], "-o", str(out), "--check")
    assert proc.returncode == 0 and "structural check: ok" in proc.stdout + proc.stderr, proc.stderr
    proc = cli("partition", "--model", "lenet", "--trial", traced["trial_id"], "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)


def test_reduced_precisions_carry_their_check_against_fp32(reduced):
    fp16, int8, dynamic = (reduced[p][1] for p in ("fp16", "int8", "int8-dynamic"))
    assert all(r.ok for r in (fp16, int8, dynamic)), [r.reason for r in (fp16, int8, dynamic)]
    assert fp16.quantization is None and fp16.device.extra["litert_precision_applied"].startswith("fp16 weights")
    check = fp16.device.extra["litert_fp16_check"]
    assert check["compared_samples"] == 256 and check["top1_agreement"] >= 0.5 and "fp16_accuracy" not in check
    assert int8.quantization.kind == "full" and "static_wi8_ai8" in int8.quantization.method
    assert int8.quantization.real_data is False  # LeNet at 3x32x32: synthetic calibration, said so
    assert int8.device.extra["litert_input_quantization"].startswith("the batch quantized once")
    assert dynamic.quantization.kind == "dynamic" and dynamic.quantization.calibration.startswith("none: dynamic")
    assert reduced["int8"][0]["top1_agreement"] == int8.quantization.top1_agreement  # the table's column
    sizes = {p: reduced[p][1].device.extra["litert_model_bytes"] for p in reduced}
    assert sizes["int8"] < sizes["fp16"] and sizes["int8-dynamic"] < sizes["fp16"]
    assert {r.device.extra["litert_api"] for r in (fp16, int8, dynamic)} == {"Interpreter (ai_edge_litert.interpreter)"}
    assert all("XNNPACK" in r.device.extra["litert_delegate"] for r in (fp16, int8, dynamic))


def test_compare_and_the_mnn_suite_export_read_litert_trials(cli, traced, reduced, tmp_path):
    proc = cli("compare", traced["trial_id"], reduced["int8"][0]["trial_id"], "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)
    proc = cli("export", "--format", "mnn-suite", "--out", str(tmp_path / "suite"), "--device", "VM")
    assert proc.returncode == 0, proc.stderr
    folders = {p.name for p in (tmp_path / "suite").iterdir() if p.is_dir()}
    assert {"VM_fp16", "VM_int8", "VM_int8-dynamic"} <= folders, folders  # a result folder per precision
    assert (tmp_path / "suite" / "VM_int8" / "processed_data" / "Lenet" / "performance_Lenet.csv").exists()


def test_a_tflite_file_runs_on_litert_and_traces_its_modules(cli, tmp_path):
    model = tmp_path / "tiny_cnn.tflite"
    shutil.copy(TINY, model)
    result = cli.json("run", "--model", str(model), "--steps", "3", "--warmup", "1", "--idle", "0", "--trace",
                      "layers", "--json")  # fmt: skip
    assert result["status"] == "ok", result["reason"]
    assert (result["trial"]["backend"], result["trial"]["model"]) == ("litert", "tiny_cnn.tflite")
    assert result["workload"]["input_shape"] == [3, 32, 32] and result["workload"]["params"] >= 2253
    assert result["device"]["extra"]["model_file_inputs"].startswith("random, from the trial's seed")
    with Store(cli.store) as db:
        spans = SpanTable.from_json(db.series(result["trial_id"], "spans"))
    assert spans.names[0] == "TinyCnn" and {"features.0", "features.3", "classifier"} <= set(spans.names)


def test_dnntunes_tflite_configuration_runs_the_file_on_litert(cli, tmp_path):
    config = tmp_path / "dnntune.yaml"
    text = (FIXTURES / "dnntune" / "tflite_file.yaml").read_text()
    config.write_text(text.replace("../models/tiny_cnn.tflite", str(TINY)))
    proc = cli("sweep", str(config), "--set", "steps=2", "--set", "warmup=1", "--set", "idle=0")
    assert proc.returncode == 0, proc.stderr
    with Store(cli.store) as db:
        (trial,) = [r for r in db.trials() if r.trial.model == "tiny_cnn.tflite" and r.trial.steps == 2]
    assert trial.ok and trial.trial.backend == "litert" and trial.trial.threads == 1


def imported(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter: which of LiteRT's and its converter's modules it imported."""
    script = textwrap.dedent(code) + (
        "\nimport sys, json\nprint(json.dumps(sorted(m for m in ('ai_edge_litert', 'litert_torch', "
        "'ai_edge_quantizer', 'jax') if m in sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_core_and_a_torch_worker_never_import_litert():
    """Reading the backend's capabilities and checking a LiteRT trial import neither the runtime nor the converter;
    a torch trial's session and steps (the worker's work) import neither."""
    assert (
        imported("""
        from edgebench.registry import BACKENDS
        from edgebench.config.trial import make_trial
        BACKENDS.load('litert').capabilities, BACKENDS.load('litert').missing_device('cpu')
        make_trial(model='lenet', backend='litert', mode='infer', precision='int8-dynamic')
        import edgebench.cli, edgebench.agents.python.worker, edgebench.report.summary
        from edgebench.records.trial import Trial
        from edgebench.backends.torch.session import open_session
        session = open_session(Trial(model='lenet', batch_size=2, mode='infer', steps=1))
        session.to_inference()
        session.infer_step()
    """)
        == []
    )
