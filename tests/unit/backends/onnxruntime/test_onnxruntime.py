"""The ONNX Runtime backend end to end (real onnxruntime, real worker, store and `layers`), its profiler spans, and its
refusals (the ONNX export it runs and the node names its spans map back: tests/unit/graph/)."""

from __future__ import annotations

import importlib.util

import numpy as np

from tests.conftest import require_onnxruntime

require_onnxruntime()

from edgebench.backends.onnxruntime.profile import ClockPair, Graph, profile_table  # noqa: E402
from edgebench.backends.onnxruntime.session import thread_affinities  # noqa: E402
from edgebench.cli import main  # noqa: E402
from edgebench.host.cpu import int8_cpu_features  # noqa: E402
from edgebench.host.sysfs import SysFS  # noqa: E402


def test_train_on_onnxruntime_is_one_usage_line(capsys):
    assert main(["run", "--backend", "onnxruntime", "--no-store"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "edgebench: error: --backend: the onnxruntime backend cannot run mode 'train'; it offers: infer"


def test_without_the_package_choosing_the_backend_names_the_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    assert main(["run", "--backend", "onnxruntime", "--mode", "infer", "--no-store"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "pip install 'edgebench[onnx]'" in err and err.startswith("edgebench: error: --backend")


def test_profile_events_become_nested_spans_inside_the_window():
    """Two runs; only the second is inside the measured window. A fused Conv named after a Relu sits under the
    Conv's module; module spans are the stretches of their nodes."""
    graph = Graph(
        ops={"/a/conv/Conv": "Conv", "/a/relu/Relu": "Relu", "/fc/Gemm": "Gemm"},
        inputs={"/a/conv/Conv": [], "/a/relu/Relu": ["/a/conv/Conv"], "/fc/Gemm": ["/a/relu/Relu"]},
        consumers={"/a/conv/Conv": ["/a/relu/Relu"], "/a/relu/Relu": ["/fc/Gemm"]},
    )
    modules = {"a": "Sequential", "a.conv": "Conv2d", "a.relu": "ReLU", "fc": "Linear"}

    def run(ts):
        return [
            {"cat": "Session", "name": "model_run", "ts": ts, "dur": 100},
            {"cat": "Node", "name": "/a/relu/Relu_output_0_nchwc_kernel_time", "ts": ts + 10, "dur": 40,
             "args": {"op_name": "Conv"}},
            {"cat": "Node", "name": "/fc/Gemm_kernel_time", "ts": ts + 60, "dur": 30, "args": {"op_name": "Gemm"}},
        ]  # fmt: skip

    clock = ClockPair(epoch_ns=1_000_000_000, perf_ns=5_000)
    start_epoch = 1_000_000_000  # profiler started at the clock pair's reading
    window = (clock.to_perf(start_epoch + 500_000), clock.to_perf(start_epoch + 900_000))
    table = profile_table(run(100) + run(600), start_epoch, clock, window, graph, modules, "Net", tid=7)
    by_label = dict(zip(table.names, table.types, strict=True))
    assert table.names[0] == "Net"
    assert by_label["a.conv/Relu_output_0_nchwc"] == "Conv (fused)"
    assert by_label["fc/Gemm"] == "Gemm"
    assert len(table) == 6  # one run: root, a, a.conv, the fused node, fc, its node
    starts = sorted(table.start_ns.tolist())
    assert starts[0] == clock.to_perf(start_epoch + 600_000)
    parent = {table.names[i]: table.names[p] if p >= 0 else None for i, p in enumerate(table.parents)}
    assert parent["a.conv"] == "a" and parent["a"] == "Net" and parent["fc/Gemm"] == "fc"
    spans = dict(zip([table.names[i] for i in table.label], zip(table.start_ns, table.end_ns, strict=True),
                     strict=True))  # fmt: skip
    assert spans["a"] == spans["a.conv"] == spans["a.conv/Relu_output_0_nchwc"]


def test_pool_threads_are_pinned_to_the_trials_cores_in_turn():
    assert thread_affinities((0,), 1) is None
    assert thread_affinities((2, 3), 2) == "4"  # the calling thread is the first; ORT counts processors from 1
    assert thread_affinities((0, 1), 4) == "2;1;2"


def test_int8_cpu_features_come_from_cpuinfo(sysfs_tree):
    assert "asimddp" in int8_cpu_features(SysFS(sysfs_tree("android_phone")))
    assert int8_cpu_features(SysFS(sysfs_tree("rpi4"))) == []  # Cortex-A72: no dot product
    assert int8_cpu_features(SysFS("/nonexistent")) == []


def test_a_synthetic_calibration_is_said_to_be_synthetic():
    from edgebench.backends.quantize import calibration, compare

    calib = calibration("squeezenet", (3, 32, 32), preset=None, data=None, seed=0)
    assert not calib.real and calib.description.startswith("synthetic:")
    fp32 = np.eye(4, dtype=np.float32)
    out = compare(fp32, fp32[[0, 1, 3, 2]], None)
    assert out["top1_agreement"] == 0.5 and "fp32_accuracy" not in out
