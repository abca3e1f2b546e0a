"""The ONNX Runtime backend end to end (real onnxruntime, real worker, store and `layers`), its ONNX export, its
profiler spans, and its refusals."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require_onnxruntime

require_onnxruntime()

from edgebench.backends.onnx_export import export_workload, module_of_node  # noqa: E402
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


def test_exports_are_cached_and_training_exports_keep_every_parameter(onnx_cache):
    import onnx

    first = export_workload("lenet", batch_size=2)
    mtime = os.stat(first.path).st_mtime_ns
    again = export_workload("lenet", batch_size=2)
    assert again == first and os.stat(first.path).st_mtime_ns == mtime
    training = export_workload("lenet", batch_size=2, training=True)
    assert training.path != first.path and training.params == 349_980
    graph = onnx.load(training.path).graph
    names = {init.name for init in graph.initializer}
    assert set(training.parameter_initializers) <= names
    assert sorted(training.parameter_initializers) == sorted(
        f"{layer}.{kind}" for layer in ("features.0", "features.3", "classifier.1", "classifier.4")
        for kind in ("weight", "bias")
    )  # fmt: skip
    with pytest.raises(ValueError, match="does not take one input tensor"):
        export_workload("dcgan", batch_size=2)


def test_a_torn_export_or_an_edited_sidecar_is_exported_again(tmp_path):
    """Issue 39, caches trusted as found: a torn cached ``.onnx`` became a crashed trial, and a sidecar whose ``path``
    was edited made the backend load another file."""
    import json

    first = export_workload("lenet", batch_size=2, cache_dir=tmp_path)
    good = Path(first.path).read_bytes()
    Path(first.path).write_bytes(good[: len(good) // 2])  # torn
    assert export_workload("lenet", batch_size=2, cache_dir=tmp_path) == first and Path(first.path).read_bytes() == good
    sidecar = Path(first.path).with_suffix(".json")
    sealed = json.loads(sidecar.read_text())
    body = json.loads(sealed["body"])
    sidecar.write_text(json.dumps({**sealed, "body": json.dumps({**body, "path": "/tmp/evil.onnx"})}))
    assert export_workload("lenet", batch_size=2, cache_dir=tmp_path).path == first.path  # its seal broke
    from edgebench.host.files import write_sealed

    write_sealed(sidecar, {**body, "path": "/tmp/evil.onnx"}, sealed["derived_from"])  # even sealed
    assert export_workload("lenet", batch_size=2, cache_dir=tmp_path).path == first.path


def test_node_names_map_back_to_modules():
    modules = {"stages", "stages.0", "stages.0.0", "stages.0.0.conv1", "stages.0.0.relu", "stages.0.0.downsample",
               "stages.0.0.downsample.0", "fc"}  # fmt: skip
    assert module_of_node("/stages/stages.0/stages.0.0/conv1/Conv", modules) == "stages.0.0.conv1"
    assert module_of_node("/stages/stages.0/stages.0.0/relu_1/Relu", modules) == "stages.0.0.relu"
    assert module_of_node("/stages/stages.0/stages.0.0/downsample/downsample.0/Conv", modules) == (
        "stages.0.0.downsample.0"
    )
    assert module_of_node("/fc/Gemm", modules) == "fc"
    assert module_of_node("/Flatten", modules) is None


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
