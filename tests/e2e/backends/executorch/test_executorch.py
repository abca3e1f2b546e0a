"""The ExecuTorch backends end to end: the real command, worker, preparing child and runtime; training that falls
like torch's, inference at each precision with its accuracy record, ETDump spans that ``layers``, ``trace`` and
``partition`` read, a user's ``.pte``, and the one line a missing runtime gives.

Lowering runs once per test session (the suite's derived-files cache); each command still imports torch and the
runtime (seconds), so the trials are few, small (LeNet, a few steps) and shared by the module's tests.
"""

from __future__ import annotations

import json

import pytest

from edgebench.records.spans import BACKWARD, OPTIMIZER, SpanTable
from edgebench.store import Store
from tests.conftest import pythonpath_first, require_executorch
from tests.paths import FIXTURES


@pytest.fixture(scope="module")
def cli(cli_factory):
    require_executorch()
    return cli_factory("executorch-store", columns=200)


def run_json(cli, *args: str) -> dict:
    proc = cli("run", "--model", "lenet", "--threads", "1", "--warmup", "1", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)  # the whole of stdout is the document: nothing of ExecuTorch's logs


@pytest.fixture(scope="module")
def trained(cli):
    """The issue's "done when": LeNet trains on ExecuTorch (portable kernels, the runtime's SGD), traced."""
    return run_json(cli, "--backend", "executorch", "-b", "4", "--steps", "6", "--infer-steps", "2",
                    "--trace", "layers")  # fmt: skip


@pytest.fixture(scope="module")
def int8(cli):
    return run_json(cli, "--backend", "executorch", "--mode", "infer", "--precision", "int8", "-b", "1",
                    "--steps", "20", "--trace", "layers")  # fmt: skip


def test_lenet_trains_on_executorch_and_says_what_ran(trained):
    assert trained["status"] == "ok", trained["reason"]
    assert trained["trial"]["backend"] == "executorch" and trained["trial"]["mode"] == "train"
    assert trained["loss"]["finite"] and trained["loss"]["last"] < trained["loss"]["first"]
    env = trained["device"]["extra"]
    assert trained["device"]["executorch"] == "1.5.1"
    assert env["executorch_kernels"] == "portable" and "XNNPACK packs the weights" in env["executorch_training_kernels"]
    assert env["executorch_optimizer"].startswith("get_sgd_optimizer(lr=0.01, momentum=0.9")
    assert "inv schedule" in env["executorch_lr_schedule"] and "classifier.3" in env["executorch_dropout"]
    assert env["executorch_worker_imported_exir"] is False  # the exporter stayed in the preparing child
    assert env["executorch_planned_arena_bytes"][0] == 0 and env["executorch_planned_arena_bytes"][1] > 0
    assert trained["latency"]["infer_ms"]["n"] == 2  # the inference program, lowered from the initial weights
    assert "xnnpack inference program" in env["executorch_inference_after_training"]
    cold = trained["cold_start"]
    assert cold["model_load_what"].startswith("executorch: the program file read") and cold["model_load_s"] > 0
    memory = trained["memory"]["by_category"]
    assert memory["params_bytes"] == memory["gradients_bytes"] == 4 * trained["workload"]["params"]
    assert memory["activations_bytes"] is None and any("planned arena" in u for u in memory["unexposed"])


def test_a_training_trace_has_forward_backward_and_the_optimizer(cli, trained):
    with Store(cli.store) as db:
        spans = SpanTable.from_json(db.series(trained["trial_id"], "spans"))
    kinds = set(spans.kind.tolist())
    assert BACKWARD in kinds and OPTIMIZER in kinds
    assert any(n.startswith("convolution_backward #") for n in spans.names)
    proc = cli("layers", trained["trial_id"], "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["rows"]
    assert sum(r["backward_ms"] for r in rows) > 0


def test_int8_inference_carries_its_accuracy_against_fp32(int8):
    assert int8["status"] == "ok", int8["reason"]
    q = int8["quantization"]
    assert "XNNPACKQuantizer" in q["method"] and q["kind"] == "full"
    assert q["real_data"] is True and q["calibration"].startswith("mnist:")
    assert q["accuracy_change"] == pytest.approx(q["int8_accuracy"] - q["fp32_accuracy"])
    assert int8["device"]["extra"]["executorch_delegates"] == ["XnnpackBackend"]


def test_etdump_spans_are_the_layer_table_trace_and_partition_read(cli, int8, tmp_path):
    with Store(cli.store) as db:
        spans = SpanTable.from_json(db.series(int8["trial_id"], "spans"))
    assert spans.names[0] == "LeNet" and spans.notes["backend"] == "executorch"
    ops = [n for n in spans.names if "/" in n]
    assert any(n.startswith("features.0/Convolution") for n in ops)  # XNNPACK's op, under the module it ran for
    assert int8["trace_summary"]["covered_pct"] > 50
    proc = cli("layers", int8["trial_id"], "--depth", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert {"features", "classifier"} <= {r["name"] for r in json.loads(proc.stdout)["rows"]}
    out = tmp_path / "trace.json"
    proc = cli("trace", int8["trial_id"], "-o", str(out), "--check")
    assert proc.returncode == 0 and "structural check: ok" in proc.stdout + proc.stderr, proc.stderr
    proc = cli("partition", "--model", "lenet", "--trial", int8["trial_id"], "--json")
    assert proc.returncode == 0, proc.stderr


def test_fp16_on_the_portable_kernels_is_compared_with_fp32(cli):
    doc = run_json(cli, "--backend", "executorch-portable", "--mode", "infer", "--precision", "fp16", "-b", "2",
                   "--steps", "3")  # fmt: skip
    assert doc["status"] == "ok", doc["reason"]
    env, q = doc["device"]["extra"], doc["quantization"]
    assert env["executorch_kernels"] == "portable" and env["executorch_delegates"] == []
    assert q["method"].startswith("fp16:") and q["top1_agreement"] >= 0.9 and q["max_abs_output_diff"] < 0.05


def test_a_pte_file_runs_and_traces_as_given(cli):
    pte = FIXTURES / "executorch" / "tiny_xnnpack.pte"
    doc = json.loads(cli("run", "--model", str(pte), "--trace", "layers", "--steps", "5", "--json").stdout)
    assert doc["status"] == "ok", doc["reason"]
    assert doc["trial"]["backend"] == "executorch" and doc["trial"]["mode"] == "infer"
    assert doc["trial"]["batch_size"] == 2  # the program's own batch
    env = doc["device"]["extra"]
    assert env["model_file"] == str(pte) and env["executorch_delegates"] == ["XnnpackBackend"]
    with Store(cli.store) as db:
        spans = SpanTable.from_json(db.series(doc["trial_id"], "spans"))
    assert spans.names[0] == "tiny_xnnpack" and any(n.startswith("Convolution (NHWC") for n in spans.names)
    proc = cli("run", "--model", str(pte), "--batch-size", "3")
    assert proc.returncode == 2 and "fixed batch of 2" in proc.stderr and proc.stderr.count("\n") == 1


def test_a_missing_runtime_is_one_line_naming_the_extra(cli, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass Block:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'executorch':\n            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    proc = cli("run", "--backend", "executorch", "--steps", "1", env=pythonpath_first(blocker))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "pip install 'edgebench[executorch]'" in proc.stderr and proc.stdout == ""
