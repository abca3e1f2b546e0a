"""ExecuTorch's files read without ExecuTorch: real ETDumps and programs (``tests/fixtures/executorch``), the
ETDump's runs turned into layer spans, a ``.pte`` as a ``--model`` file, and what the backends refuse."""

from __future__ import annotations

import pytest

from edgebench.backends import model_file as mf
from edgebench.backends.executorch import etdump, program
from edgebench.backends.executorch.lower import Instruction
from edgebench.backends.executorch.support import unsupported
from edgebench.backends.executorch.trace import Labels, delegated_modules, span_rows, xnnpack_kind
from edgebench.records.spans import BACKWARD, FORWARD
from edgebench.workloads import get_workload
from tests.paths import FIXTURES

HERE = FIXTURES / "executorch"


def test_etdump_of_an_xnnpack_program_has_one_run_per_execution_with_the_delegates_op_names():
    runs = etdump.read(HERE / "lenet_xnnpack.etdp")
    assert [r.name for r in runs] == ["Default"] + ["Execute"] * 5
    assert {e.name for e in runs[0].events} == {"Method::init", "Program::load_method"}
    run = etdump.executions(runs)[0]
    ops = [e.delegate_debug_id_str for e in run.events if e.name is None]
    assert ops[:3] == ["Transpose (ND, X32) #1", "Convolution (NHWC, F32) IGEMM #1", "Max Pooling (NHWC, F32) #1"]
    whole = next(e for e in run.events if e.name == "Method::execute")
    call = next(e for e in run.events if e.name == "DELEGATE_CALL")
    assert whole.start_time <= call.start_time < call.end_time <= whole.end_time
    assert all(call.start_time <= e.start_time <= e.end_time <= call.end_time for e in run.events if e.name is None)


def test_etdump_of_a_portable_program_names_each_kernel_twice():
    run = etdump.executions(etdump.read(HERE / "lenet_portable.etdp"))[0]
    kernels = [e for e in run.events if (e.name or "").startswith("native_call_")]
    wrappers = [e for e in run.events if e.name == "OPERATOR_CALL"]
    assert len(kernels) == len(wrappers) == 14
    assert kernels[0].name == "native_call_convolution.out" and kernels[0].instruction_id == 0


@pytest.mark.parametrize("data", [b"", b"\x00" * 64, (HERE / "tiny_portable.pte").read_bytes()])
def test_anything_else_is_not_an_etdump(data):
    with pytest.raises(etdump.NotETDump):
        etdump.parse(data)


def test_a_cut_etdump_is_refused_not_misread():
    data = (HERE / "lenet_train.etdp").read_bytes()
    with pytest.raises(etdump.NotETDump, match="damaged"):
        etdump.parse(data[: len(data) // 3])


def test_program_reader_gives_each_methods_tensors_arenas_and_instructions():
    portable = program.read(HERE / "tiny_portable.pte")["forward"]
    assert portable.inputs == (program.TensorSpec((2, 1, 8, 8), "float32"),)
    assert portable.outputs == (program.TensorSpec((2, 4), "float32"),)
    assert portable.planned_bytes[0] == 0 and portable.planned_bytes[1] > 0
    assert portable.instructions[:3] == ("convolution", "relu", "max_pool2d_with_indices")
    assert portable.delegates == ()
    xnnpack = program.read(HERE / "tiny_xnnpack.pte")["forward"]
    assert xnnpack.instructions == ("XnnpackBackend call",) and xnnpack.delegates == ("XnnpackBackend",)
    assert program.read(HERE / "tiny_fp16.pte")["forward"].inputs[0].dtype == "float16"


def test_a_training_program_returns_loss_user_outputs_gradients_and_parameters():
    methods = program.read(HERE / "tiny_train.pte")
    assert "__et_training_fqn_forward" in methods
    forward = methods["forward"]
    assert [t.dtype for t in forward.inputs if t] == ["float32", "int64"]
    assert len(forward.outputs) == 2 + 2 * 4  # loss, argmax; conv and linear weight and bias, gradients then values
    assert any(op == "convolution_backward" for op in forward.instructions)


def test_a_pte_model_file_is_read_without_executorch_and_its_shapes_are_fixed(tmp_path):
    path = mf.check_path(str(HERE / "tiny_portable.pte"))
    info = mf.inspect(path)
    assert info.format == "pte" and mf.RUNS_ON["pte"] == ("executorch",)
    assert [i.name for i in info.inputs] == ["input_0"] and info.params is None
    feeds, batch = mf.resolve_feeds(info, batch_size=None, input_name=None, input_shape=None)
    assert batch == 2 and feeds[0].dims == (2, 1, 8, 8)
    with pytest.raises(ValueError, match="fixed batch of 2"):
        mf.resolve_feeds(info, batch_size=4, input_name=None, input_shape=None)
    with pytest.raises(ValueError, match="fixes dimension 2"):
        mf.resolve_feeds(info, batch_size=None, input_name=None, input_shape=(1, 16, 16))
    fake = tmp_path / "m.pte"
    fake.write_bytes(b"not a program at all")
    with pytest.raises(ValueError, match="not an ExecuTorch program"):
        mf.inspect(fake)


def test_delegate_ops_are_matched_to_the_ops_it_took_by_kind_and_order():
    taken = [["convolution", "features.0"], ["relu", "features.1"], ["max_pool2d", "features.2"],
             ["view_copy", "classifier.0"], ["linear", "classifier.1"]]  # fmt: skip
    events = ["Transpose (ND, X32) #1", "Convolution (NHWC, F32) IGEMM #1", "Max Pooling (NHWC, F32) #1",
              "Transpose (ND, X32) #2", "Static Reshape (NC) #1", "Fully Connected (NC, F32) GEMM #1"]  # fmt: skip
    # An inserted layout op sits under the next op's module; the fused ReLU has no event of its own.
    assert delegated_modules(events, taken) == [
        "features.0", "features.0", "features.2", "classifier.0", "classifier.0", "classifier.1"
    ]  # fmt: skip
    assert xnnpack_kind("Fully Connected (NC, F32) GEMM #3") == "Fully Connected"
    assert xnnpack_kind("Add #2") == "Add"


def _lenet5_labels() -> Labels:
    names = ["LeNet5", "features", "features.0", "features.2", "features.3", "features.5", "fc1", "fc2", "fc3"]
    return Labels(names, ["LeNet5", "Sequential", "Conv2d", "MaxPool2d", "Conv2d", "MaxPool2d", "Linear", "Linear",
                          "Linear"], [-1, 0, 1, 1, 1, 1, 0, 0, 0])  # fmt: skip


def test_an_xnnpack_etdump_becomes_nested_layer_spans_inside_each_call():
    runs = etdump.executions(etdump.read(HERE / "lenet_xnnpack.etdp"))
    delegated = [["convolution", "features.0"], ["max_pool2d", "features.2"], ["convolution", "features.3"],
                 ["max_pool2d", "features.5"], ["linear", "fc1"], ["linear", "fc2"], ["linear", "fc3"]]  # fmt: skip
    instructions = [Instruction("XnnpackBackend call", None, "forward", delegated)]
    windows = [(1_000_000 * (i + 1), 1_000_000 * (i + 1) + 500_000) for i in range(len(runs))]
    table = span_rows(runs, windows, _lenet5_labels(), instructions, tid=7, training=False)
    assert table.notes["backend"] == "executorch"
    names = list(table.names)
    conv = names.index("features.0/Convolution (NHWC, F32) IGEMM #1")
    assert table.parents[conv] == names.index("features.0")
    assert table.parents[names.index("fc3/Fully Connected (NC, F32) GEMM #3")] == names.index("fc3")
    for (start, end), run in zip(windows, runs, strict=True):
        inside = (table.start_ns >= start) & (table.end_ns <= end)
        whole = next(e for e in run.events if e.name == "Method::execute")
        roots = table.label[inside] == 0
        assert roots.sum() == 1
        assert (
            int(table.end_ns[inside][roots][0] - table.start_ns[inside][roots][0]) == whole.end_time - whole.start_time
        )
    assert set(table.kind.tolist()) == {FORWARD}


def test_a_portable_etdump_counts_each_kernel_once_and_training_spans_say_forward_or_backward():
    runs = etdump.executions(etdump.read(HERE / "lenet_portable.etdp"))
    windows = [(10_000_000 * (i + 1), 10_000_000 * (i + 1) + 9_000_000) for i in range(len(runs))]
    table = span_rows(runs, windows, Labels.of(None, "lenet"), None, tid=1, training=False)
    assert len(table) == len(runs) * (14 + 1)  # 14 kernels (native_call_* only) and the root
    train_runs = etdump.executions(etdump.read(HERE / "lenet_train.etdp"))
    ops = [e for e in train_runs[0].events if (e.name or "").startswith("native_call_")]
    first_backward = next(e.instruction_id for e in ops if "convolution_backward" in (e.name or "")) - 20
    instructions = [Instruction("op", None, "forward")] * (max(e.instruction_id for e in ops) + 1)
    for e in ops:
        phase = "backward" if e.instruction_id >= first_backward else "forward"
        instructions[e.instruction_id] = Instruction(e.name.removeprefix("native_call_").split(".")[0], None, phase)
    windows = [(10**9 * (i + 1), 10**9 * (i + 1) + 900_000_000) for i in range(len(train_runs))]
    table = span_rows(train_runs, windows, Labels.of(None, "lenet"), instructions, tid=1, training=True,
                      optimizer_windows=[(w[1] - 1000, w[1]) for w in windows])  # fmt: skip
    assert f"convolution_backward #{first_backward + 20}" in table.names
    assert {FORWARD, BACKWARD} <= set(table.kind.tolist())
    assert "optimizer.step" in table.names


def test_what_the_backends_refuse_before_anything_runs():
    assert "classification" in (unsupported(get_workload("dcgan"), "infer") or "")
    assert "seq2seq task" in (unsupported(get_workload("transformer"), "train") or "")
    assert "SGD only" in (unsupported(get_workload("inception_v3"), "train") or "")
    assert unsupported(get_workload("inception_v3"), "infer") is None
    assert unsupported(get_workload("lenet"), "train") is None


def test_neither_the_checks_nor_a_torch_trial_import_executorch():
    """The capability checks, the refusal, a ``.pte``'s inspection and a torch session import no ExecuTorch (it is an
    optional extra, and importing it costs seconds)."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys\n"
        "from edgebench.registry import BACKENDS\n"
        "for name in ('executorch', 'executorch-portable'):\n"
        "    b = BACKENDS.load(name); b.capabilities; b.missing_device('cpu'); b.model_refusal('lenet', 'train')\n"
        "from edgebench.backends.model_file import inspect\n"
        f"inspect({str(HERE / 'tiny_xnnpack.pte')!r})\n"
        "torch_free = 'torch' not in sys.modules\n"
        "from edgebench.workloads import get_workload\n"
        "get_workload('lenet').session(2).train_step()\n"
        "print(json.dumps([torch_free, sorted(m for m in sys.modules if m.startswith('executorch'))]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    torch_free, imported = json.loads(proc.stdout.strip().splitlines()[-1])
    assert torch_free and imported == []
