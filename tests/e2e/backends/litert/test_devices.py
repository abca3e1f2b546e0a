"""LiteRT on devices: a .tflite file run by the Python backend on an SSH board whose Python has the runtime, and
LiteRT's own ``benchmark_model`` on a phone without Python (an emulated one, Debian's real adb client), its
op-profiling table read into layer spans.  The tool's output is the recorded fixture (its README says how it was
composed from the tool's source); nothing here has met a real phone."""

from __future__ import annotations

import shutil

from edgebench.backends import model_file as mf
from edgebench.config.trial import make_trial
from edgebench.launch.trial import run_trial
from edgebench.records.spans import SpanTable
from edgebench.targets import open_target
from edgebench.targets.named import TargetConfig
from tests.adbd import adbd_sim  # noqa: F401  (the session fixture)
from tests.conftest import require_litert
from tests.paths import FIXTURES
from tests.sshd import board, sshd  # noqa: F401  (the fixtures)

require_litert()

TINY = FIXTURES / "models" / "tiny_cnn.tflite"
OP_PROFILING = FIXTURES / "command" / "tflite_benchmark_model_op_profiling.out"


def test_a_tflite_file_is_copied_to_a_board_and_run_there_by_litert(board, tmp_path):  # noqa: F811
    model = tmp_path / "tiny_cnn.tflite"
    shutil.copy(TINY, model)
    trial = make_trial(model=str(model), steps=2, warmup=1, idle_s=0, trace="layers")
    run = run_trial(trial, target=board())
    assert run.result.ok, run.result.reason
    assert run.result.trial.backend == "litert" and run.result.trial.model_sha256 == mf.file_digest(model)
    assert run.run.env["model_file_on_device"].endswith(".tflite") and run.result.device.litert
    assert run.spans_json and "features.0" in SpanTable.from_json(run.spans_json).names


def test_benchmark_model_on_a_phone_gives_latency_and_layer_spans(adbd_sim, tmp_path):  # noqa: F811
    """``benchmark_model --enable_op_profiling=true`` through ``--command`` with ``--trace layers``: the tool's mean
    gives the steps, its op table the spans, and the pushed .tflite maps XNNPACK's rows to the model's modules."""
    tool = tmp_path / "benchmark_model"
    tool.write_text('#!/bin/sh\n# the real tool\'s recorded output, whatever the flags\ncat "$(dirname "$0")/bm.out"\n')
    phone = adbd_sim.phone("litert-phone")
    target = open_target("phone", named={"phone": TargetConfig(name="phone", **phone.target_config())})
    command = ("sh benchmark_model --graph=tiny_cnn.tflite --num_threads=1 --enable_op_profiling=true --num_runs=20 "
               "--min_secs=0 --warmup_runs=2 --warmup_min_secs=0")  # fmt: skip
    trial = make_trial(command=command, push=(str(tool), f"{OP_PROFILING}:bm.out", str(TINY)),
                       step_pattern="tflite-benchmark-model", trace="layers", model="tiny_cnn_tflite", idle_s=0,
                       batch_size=1, sample_interval_ms=50.0)  # fmt: skip
    try:
        run = run_trial(trial, target=target)
    finally:
        target.close()
    assert run.result.ok, run.result.reason
    assert run.result.latency.step_ms.n == 20 and run.result.device.extra["step_times"] == "mean only"
    spans = SpanTable.from_json(run.spans_json or "")
    assert spans.names[0] == "TinyCnn" and {"features.0", "features.3", "classifier"} <= set(spans.names)
    assert spans.notes["xnnpack_operators_matched"] == 8 and "tiny_cnn.tflite" in spans.notes["labels"]
    assert run.result.trace_summary is not None and run.result.trace_summary.granularity == "layers"
