"""The LiteRT backend in process: its refusals, a .tflite file read from its flatbuffer, tensor names and XNNPACK
operators mapped back to modules, the op profiler through the real wheel's C API, benchmark_model's op table, and
what the core never imports.  Trials through the real command are in tests/e2e/backends/litert/."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from pydantic import ValidationError

from tests.conftest import require_litert
from tests.paths import FIXTURES

require_litert()

from edgebench.backends.litert import missing_converter  # noqa: E402
from edgebench.backends.litert.capi import (  # noqa: E402
    DEFAULT,
    DELEGATE_PROFILED_OPERATOR_INVOKE,
    OPERATOR_INVOKE,
    ProfiledEvent,
    ProfiledModel,
    check_version,
)
from edgebench.backends.litert.layers import align, file_modules, op_module, root_class  # noqa: E402
from edgebench.backends.litert.model_file import TfliteOp, read_model  # noqa: E402
from edgebench.backends.litert.op_table import op_table_spans, read_op_table  # noqa: E402
from edgebench.backends.litert.prepare import from_model_output, to_model_input  # noqa: E402
from edgebench.backends.litert.profile import events_table  # noqa: E402
from edgebench.cli import main  # noqa: E402
from edgebench.config.trial import make_trial  # noqa: E402

TINY = FIXTURES / "models" / "tiny_cnn.tflite"
OP_PROFILING = FIXTURES / "command" / "tflite_benchmark_model_op_profiling.out"
#: The tiny model's modules as torch names them (tests/fixtures/models/make_tiny_cnn.py).
TINY_MODULES = {
    "features": "Sequential",
    "features.0": "Conv2d",
    "features.1": "ReLU",
    "features.2": "MaxPool2d",
    "features.3": "Conv2d",
    "features.4": "ReLU",
    "features.5": "MaxPool2d",
    "classifier": "Linear",
}


def without(module: str, monkeypatch) -> None:
    """Make ``module`` look uninstalled to the checks (``importlib.util.find_spec``)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))


def test_train_on_litert_is_one_usage_line(capsys):
    assert main(["run", "--backend", "litert", "--no-store"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "edgebench: error: --backend: the litert backend cannot run mode 'train'; it offers: infer"


def test_without_the_runtime_choosing_the_backend_names_the_extra(monkeypatch, capsys):
    without("ai_edge_litert", monkeypatch)
    assert main(["run", "--backend", "tflite", "--mode", "infer", "--no-store"]) == 2  # TFLite: LiteRT's old name
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("edgebench: error: --backend: litert: ")
    assert "pip install 'edgebench[litert]'" in err


def test_without_the_converter_a_zoo_model_names_the_convert_extra(monkeypatch):
    without("litert_torch", monkeypatch)
    assert missing_converter() == (
        "converting a zoo model to .tflite needs the litert-torch package: pip install 'edgebench[litert-convert]'"
    )


def test_a_tflite_file_is_read_from_its_flatbuffer():
    model = read_model(TINY)
    (inp,), (out,) = model.inputs, model.outputs
    assert (inp.name, inp.dims, inp.dtype) == ("serving_default_args_0", (1, 3, 32, 32), "float32")
    assert (out.dims, out.dtype) == ((1, 5), "float32")
    assert model.params >= 2253  # the torch model's parameters, and the small shape constants the converter adds
    assert [op.name for op in model.ops] == ["TRANSPOSE", "CONV_2D", "MAX_POOL_2D", "CONV_2D", "MAX_POOL_2D",
                                             "TRANSPOSE", "RESHAPE", "FULLY_CONNECTED"]  # fmt: skip


@pytest.mark.parametrize("content", [b"", b"not a model at all", b"1234TFL3" + b"\xff" * 40])
def test_a_file_that_is_no_tflite_model_is_one_line(tmp_path, content):
    path = tmp_path / "m.tflite"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"is not a TFLite model") as info:
        read_model(path)
    assert "\n" not in str(info.value)


def test_a_tflite_file_runs_at_the_precision_it_was_converted_at():
    trial = make_trial(model=str(TINY))
    assert (trial.backend, trial.mode, trial.batch_size, trial.model) == ("litert", "infer", 1, "tiny_cnn.tflite")
    for precision, words in (("fp16", "runs a model file at the precision it was converted at"),
                             ("int8-dynamic", "quantizes only the zoo models it builds")):  # fmt: skip
        with pytest.raises(ValidationError, match=words):
            make_trial(model=str(TINY), precision=precision)
    with pytest.raises(ValidationError, match="the onnxruntime backend cannot load it"):
        make_trial(model=str(TINY), backend="onnxruntime")


def test_int8_dynamic_is_quantization_inference_only():
    from edgebench.records.trial import Trial

    with pytest.raises(ValidationError, match="'int8-dynamic' is post-training quantization"):
        Trial(model="lenet", backend="litert", precision="int8-dynamic")
    with pytest.raises(ValidationError, match="the torch backend cannot run at precision 'int8-dynamic'"):
        make_trial(model="lenet", mode="infer", precision="int8-dynamic")


def test_tensor_names_give_each_op_its_module():
    ops = read_model(TINY).ops
    chains = [op_module(op, TINY_MODULES) for op in ops]
    modules = [c[-1][0] if c else None for c in chains]  # the flatten's reshape: from its input, the pool's output
    assert modules == ["features.0", "features.0", "features.2", "features.3", "features.5", "features.5",
                       "features.5", "classifier"]  # fmt: skip
    assert chains[1] == [("features", "Sequential"), ("features.0", "Conv2d")]  # the fused ReLU's conv
    assert file_modules(ops) == {k: v for k, v in TINY_MODULES.items() if "ReLU" not in v}  # from the names alone
    assert root_class(ops, "file") == "TinyCnn"
    tf_style = TfliteOp(0, "CONV_2D", ("model/conv2d/Conv2D;model/conv2d/BiasAdd",))
    assert op_module(tf_style, None) == [("model", "scope"), ("model.conv2d", "scope")]


def test_xnnpack_operators_are_matched_to_tflite_ops_in_order():
    ops = [TfliteOp(i, n, ()) for i, n in enumerate(["TRANSPOSE", "PAD", "CONV_2D", "CONV_2D", "ADD", "MEAN"])]
    operators = ["Transpose (ND, X32) Transpose", "Convolution (NHWC, F32) IGEMM", "Convert (NC, F32, QDU8)",
                 "Fully Connected (NC, QDU8, F32, QC8W) GEMM", "Add (ND)", "Sum (ND) Reduce2"]  # fmt: skip
    # the PAD folded into the convolution; a 1x1 convolution runs as a GEMM; the Convert XNNPACK inserted
    assert align(operators, ops) == [0, 2, None, 3, 4, 5]
    # an operator matches no op past one that is not foldable: unmatched, and the next still finds its own
    assert align(["Max Pooling (NHWC, F32)", "Add (ND)"], [TfliteOp(0, "CONV_2D", ()), TfliteOp(1, "ADD", ())]) == [
        None,
        None,
    ]


def _events(start_us: int) -> list[ProfiledEvent]:
    """One compiled-model run of the tiny model as the profiler lists it: the interpreter ran op 3 itself, so
    XNNPACK has two partitions whose operators are numbered from 0 each."""
    ops = [("Transpose (ND, X32) Transpose", 0, 2), ("Convolution (NHWC, F32) IGEMM", 1, 30),
           ("Max Pooling (NHWC, F32)", 2, 4)]  # fmt: skip
    after = [("Max Pooling (NHWC, F32)", 0, 3), ("Transpose (ND, X32) Transpose", 1, 1),
             ("Static Reshape (NC)", 2, 0), ("Fully Connected (NC, F32) GEMM", 3, 5)]  # fmt: skip
    return [
        ProfiledEvent("LiteRT::Run[buffer registration]", DEFAULT, start_us, 10, 0),
        ProfiledEvent("Invoke", DEFAULT, start_us + 10, 100, 0),
        *(ProfiledEvent(tag, DELEGATE_PROFILED_OPERATOR_INVOKE, 0, us, i) for tag, i, us in ops),
        ProfiledEvent("CONV_2D", OPERATOR_INVOKE, start_us + 50, 20, 3),
        *(ProfiledEvent(tag, DELEGATE_PROFILED_OPERATOR_INVOKE, 0, us, i) for tag, i, us in after),
        ProfiledEvent("Invoke", 32, 0, 4294967296, 2**64 - 1),  # the telemetry event every run ends with
        ProfiledEvent("LiteRT::Run[Buffer sync]", DEFAULT, start_us + 110, 5, 0),
    ]


def test_profiler_events_become_nested_layer_spans():
    ops = read_model(TINY).ops
    events = _events(1_000) + _events(2_000)
    table = events_table(events, (1_900_000, 2_200_000), ops, TINY_MODULES, "TinyCnn", tid=7)
    names = [table.names[i] for i in table.label]
    assert table.names[0] == "TinyCnn" and names.count("TinyCnn") == 1  # only the run inside the window
    spans = {n: (s, e) for n, s, e in zip(names, table.start_ns.tolist(), table.end_ns.tolist(), strict=True)}
    assert spans["TinyCnn"] == (2_000_000, 2_115_000)
    conv = spans["features.0/Convolution (NHWC, F32) IGEMM #1"]
    assert conv == (2_012_000, 2_042_000)  # laid after the 2 us transpose from the Invoke's start
    assert spans["features.3/CONV_2D [3]"] == (2_050_000, 2_070_000)  # the interpreter's own op keeps its start
    assert spans["features.5/Max Pooling (NHWC, F32) #3"][0] == 2_070_000  # the second partition follows it
    assert spans["classifier/Fully Connected (NC, F32) GEMM #6"] == (2_074_000, 2_079_000)
    parent = {table.names[i]: table.names[p] for i, p in enumerate(table.parents) if p >= 0}
    assert parent["features.0"] == "features" and parent["features.0/Convolution (NHWC, F32) IGEMM #1"] == "features.0"
    assert spans["features"][0] == spans["features.0"][0] and spans["features"][1] >= spans["features.5"][1]
    assert table.notes["xnnpack_operators"] == 7 and table.notes["xnnpack_operators_matched"] == 7
    assert table.notes["tflite_ops_run_by_the_interpreter"] == 1 and table.notes["operators_without_a_module"] == 0
    order = [table.names[i] for i in table.label]
    assert (
        order.index("features") < order.index("features.0") < order.index("features.0/Transpose (ND, X32) Transpose #0")
    )  # a parent before its child where both start together


def test_the_c_api_profiles_the_model_and_runs_it_as_the_interpreter_does():
    """The real wheel's libLiteRt.so: the compiled model's output is the Interpreter's, and one profiled run is
    a root, the modules and one span per XNNPACK operator, every operator matched."""
    import time

    from ai_edge_litert.interpreter import Interpreter

    x = np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32)
    model = ProfiledModel(str(TINY), threads=1)
    assert [(n, size) for n, _, size in model.inputs] == [("serving_default_args_0", x.nbytes)]
    model.write([x])
    model.run()
    model.start_profiling()
    window = [time.perf_counter_ns()]
    model.run()
    window.append(time.perf_counter_ns())
    model.stop_profiling()
    table = events_table(model.events(), (window[0], window[1]), read_model(TINY).ops, TINY_MODULES, "TinyCnn", 1)
    assert table.notes["xnnpack_operators"] == table.notes["xnnpack_operators_matched"] == 8
    assert window[0] <= int(table.start_ns.min()) and int(table.end_ns.max()) <= window[1]  # the worker's clock
    interpreter = Interpreter(model_path=str(TINY))
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    expected = interpreter.get_tensor(interpreter.get_output_details()[0]["index"]).ravel()
    assert np.allclose(model.read(0, np.float32), expected, rtol=1e-5, atol=1e-6)


def test_a_wheel_whose_c_api_was_not_checked_is_refused_in_one_line():
    with pytest.raises(RuntimeError, match=r"ai-edge-litert 2\.3\.x lays it out; this machine has 2\.4\.0"):
        check_version("2.4.0")


def test_int8_inputs_and_outputs_are_quantized_with_the_files_scale():
    detail = {"dtype": np.int8, "quantization": (0.5, -3)}
    q = to_model_input(np.array([0.0, 1.0, 100.0, -100.0], np.float32), detail)
    assert q.tolist() == [-3, -1, 127, -128] and q.dtype == np.int8
    assert from_model_output(np.array([-3, 1], np.int8), detail).tolist() == [0.0, 2.0]


def test_benchmark_models_op_table_is_read_from_its_output():
    lines = OP_PROFILING.read_text().splitlines()
    rows = read_op_table(lines)
    assert rows is not None and len(rows) == 8  # the regular runs' table, not the initialization's
    assert rows[1].node_type == "Convolution (NHWC, F32) IGEMM" and rows[1].name == (
        "Delegate/Convolution (NHWC, F32) IGEMM:1"
    )
    assert rows[1].delegated and rows[1].index == 1 and rows[1].avg_ms > 0 and rows[1].times_called == 1
    assert read_op_table(["INFO: Inference timings in us: Init: 1, First inference: 2"]) is None
    old = [
        "Operator-wise Profiling Info for Regular Benchmark Runs:",
        "============================== Run Order ==============================",
        "\t[node type]\t[start]\t[first]\t[avg ms]\t[%]\t[cdf%]\t[mem KB]\t[times called]\t[Name]",
        "\tCONV_2D\t0.000\t1.500\t1.250\t50.000%\t50.000%\t0.000\t2\t[a/conv/x]:0",
        "",
    ]
    (row,) = read_op_table(old) or []  # an older TensorFlow's table: a [start] column, no INFO: prefix
    assert (row.node_type, row.avg_ms, row.times_called, row.outputs()) == ("CONV_2D", 1.25, 2, ("a/conv/x",))


def test_benchmark_models_rows_become_spans_in_each_measured_step():
    rows = read_op_table(OP_PROFILING.read_text().splitlines())
    assert rows is not None
    windows = [(0, 1_000_000), (1_000_000, 2_000_000)]
    mapped = op_table_spans(rows, windows, read_model(TINY).ops, "tiny", 3, "mapped")
    names = [mapped.names[i] for i in mapped.label]
    assert names.count("TinyCnn") == 2 and "features.0" in names and "classifier" in names
    assert mapped.notes["xnnpack_operators_matched"] == 8 and "mean" in mapped.notes["op_times"]
    conv = [(s, e) for n, s, e in zip(names, mapped.start_ns, mapped.end_ns, strict=True) if "IGEMM #1" in n]
    assert conv[0][1] - conv[0][0] == round(rows[1].avg_ms * 1e6)  # its mean, laid after the transpose
    unmapped = op_table_spans(rows, windows, None, "tiny", 3, "unmapped")  # no model at hand: under the root
    assert set(unmapped.parents[1:]) == {0} and unmapped.notes["xnnpack_operators_inserted"] == 0


def test_a_command_traces_layers_only_through_a_pattern_that_reads_an_op_table():
    with pytest.raises(ValidationError, match="needs a step pattern that reads the tool's per-op times"):
        make_trial(command="./bench", step_pattern=r"^step \d+", trace="layers")
    trial = make_trial(command="./benchmark_model", step_pattern="tflite-benchmark-model", trace="layers")
    assert trial.trace == "layers"


def test_dnntunes_tflite_framework_and_file_run_on_litert():
    from edgebench.config.sweep_file import load_config

    loaded = load_config(FIXTURES / "dnntune" / "tflite_file.yaml")
    assert loaded.config.backend == ["litert"] and loaded.config.models[0].name.endswith("tiny_cnn.tflite")
    assert loaded.config.batch_sizes == [1] and loaded.config.mode == ["infer"]


def test_a_converted_model_is_read_back_only_with_its_sealed_description(tmp_path, monkeypatch):
    """The sidecar describing a cached ``.tflite`` (its module names, parameter count) was read unsealed: a torn or
    edited one, or one beside a replaced file, described a model it was not converted from.  The converter here
    writes a stand-in file (the real one's conversion is tested end to end)."""
    import json

    from edgebench.backends.litert import prepare

    conversions = []

    class Exported:
        def export(self, path):
            conversions.append(path)
            with open(path, "wb") as f:
                f.write(b"TFL3 model %d" % len(conversions))

    class Converter:
        def convert(self, module, example):
            return Exported()

    monkeypatch.setattr(prepare, "import_converter", Converter)
    first = prepare.convert_workload("lenet", batch_size=1, cache_dir=tmp_path)
    assert prepare.convert_workload("lenet", batch_size=1, cache_dir=tmp_path) == first and len(conversions) == 1
    (sidecar,) = tmp_path.glob("*.json")
    seal = json.loads(sidecar.read_text())
    seal["body"] = seal["body"].replace('"params": ', '"params": 1')  # edited: converted again
    sidecar.write_text(json.dumps(seal))
    assert prepare.convert_workload("lenet", batch_size=1, cache_dir=tmp_path).params == first.params
    assert len(conversions) == 2
    with open(first.path, "wb") as f:  # a file replaced beside its sidecar: converted again
        f.write(b"another model under the same name")
    prepare.convert_workload("lenet", batch_size=1, cache_dir=tmp_path)
    assert len(conversions) == 3
    sidecar.write_text(sidecar.read_text()[:30])  # torn
    prepare.convert_workload("lenet", batch_size=1, cache_dir=tmp_path)
    assert len(conversions) == 4
