"""The MNN backend for real (MNN 3.6.1): conversion without network or pip, training, inference, cross-checks,
precision, traces and the ``--json`` contract.  Without MNN these fail with the install line (never skip).

Sessions are module-scoped and small (LeNet at batch 4, mobilenet_v2 at 3x32x32): converting is the expensive part.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from edgebench.backends.mnn import INSTALL, missing_package
from tests.conftest import require_mnn


def test_missing_package_names_the_install_line(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "MNN" else real(name, *a))
    reason = missing_package()
    assert reason is not None and INSTALL in reason and "\n" not in reason
    assert INSTALL == "pip install 'edgebench[mnn]'"


_AUDITED_CONVERSION = textwrap.dedent(
    """
    import json, os, socket, subprocess, sys
    events = []
    REFUSED = ("socket.connect", "socket.bind", "socket.getaddrinfo", "socket.__new__", "subprocess.Popen",
               "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork")

    def hook(event, args):
        if event.startswith(REFUSED):
            events.append(event)
            raise RuntimeError(f"refused {event}")

    from pathlib import Path
    import numpy as np
    from edgebench.backends.mnn.convert import convert  # imported before the hook: nothing of MNN's yet
    from edgebench.backends.mnn.quantize import quantize_full
    sys.addaudithook(hook)
    onnx_path, folder = sys.argv[1], sys.argv[2]
    convert(onnx_path, os.path.join(folder, "train.mnn"), for_training=True)
    convert(onnx_path, os.path.join(folder, "int8.mnn"), for_training=False, weight_quant_bits=8)
    convert(onnx_path, os.path.join(folder, "fp32.mnn"), for_training=False)
    samples = np.random.default_rng(0).standard_normal((4, 1, 28, 28)).astype(np.float32)
    quantize_full(Path(folder) / "fp32.mnn", Path(folder) / "full.mnn", samples)
    def target(fd):
        try:
            return os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed by now
            return ""
    sockets = [t for t in map(target, os.listdir("/proc/self/fd")) if t.startswith("socket:")]
    forbidden = [m for m in ("MNN.tools", "MNN.tools.mnnconvert", "MNN.tools.utils.log", "aliyun") if m in sys.modules]
    print(json.dumps({"events": events, "sockets": sockets, "forbidden": forbidden}))
    """
)


def test_conversion_opens_no_socket_starts_no_pip_and_imports_no_logger(tmp_path):
    """The converter and quantizer bindings, run under an audit hook that refuses (and records) any socket or process
    start."""
    require_mnn()
    import torch

    from edgebench.graph.export import export_module
    from edgebench.workloads import get_workload

    model = get_workload("lenet").build_model(10, (1, 28, 28))
    export_module(model, torch.zeros(2, 1, 28, 28), tmp_path / "lenet.onnx", training=True)
    script = tmp_path / "audited.py"
    script.write_text(_AUDITED_CONVERSION)
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "lenet.onnx"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report == {"events": [], "sockets": [], "forbidden": []}
    assert (tmp_path / "train.mnn").stat().st_size > 0
    assert (tmp_path / "int8.mnn").stat().st_size < (tmp_path / "train.mnn").stat().st_size / 2
    assert (tmp_path / "full.mnn").stat().st_size < (tmp_path / "fp32.mnn").stat().st_size / 2


def test_converter_arguments_are_ours():
    from edgebench.backends.mnn.convert import converter_argv

    argv = converter_argv(Path("m.onnx"), Path("m.mnn"), for_training=True, weight_quant_bits=8)
    assert argv == [
        "mnnconvert",
        "-f",
        "ONNX",
        "--modelFile",
        "m.onnx",
        "--MNNModel",
        "m.mnn",
        "--bizCode",
        "edgebench",
        "--forTraining",
        "--weightQuantBits",
        "8",
    ]


def test_a_refused_conversion_carries_mnns_reason(tmp_path):
    require_mnn()
    from edgebench.backends.mnn.convert import ConversionError, convert

    (tmp_path / "bad.onnx").write_bytes(b"not a model")
    with pytest.raises(ConversionError, match="not onnx model"):
        convert(tmp_path / "bad.onnx", tmp_path / "bad.mnn", for_training=False)


def test_a_tensor_that_is_no_torch_parameter_is_caught():
    from edgebench.backends.mnn.model import match_parameters

    torch_params = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.zeros(2, dtype=np.float32)}
    mnn = [np.arange(6, dtype=np.float32).reshape(2, 3, 1, 1), np.zeros((1, 2, 1, 1), np.float32), np.zeros(2)]
    assert match_parameters(mnn, torch_params) == ([2], [])  # the flat zero bias is the extra one
    assert match_parameters(mnn[:1], torch_params) == ([], ["b"])
    assert match_parameters([*mnn, np.ones(3)], torch_params) == ([2, 3], [])


def test_ops_without_mnn_gradient_are_rewritten(tmp_path):
    require_mnn()
    import onnx
    import torch

    from edgebench.backends.mnn.model import differentiable_ops
    from edgebench.graph.export import export_module

    layers = [torch.nn.Conv2d(1, 2, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(2, 3)]
    export_module(torch.nn.Sequential(*layers), torch.zeros(2, 1, 8, 8), tmp_path / "m.onnx", training=True)
    assert differentiable_ops(tmp_path / "m.onnx") == {"Flatten": 1, "GlobalAveragePool": 1}
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert "Flatten" not in ops and "GlobalAveragePool" not in ops and {"Reshape", "ReduceMean"} <= set(ops)


def test_lr_policy_is_the_torch_tasks():
    from edgebench.backends.mnn.session import lr_at
    from edgebench.workloads import get_workload

    lenet, mobilenet = get_workload("lenet").optimizer, get_workload("mobilenet_v2").optimizer
    assert lr_at(lenet, 0) == lenet.lr and lr_at(lenet, 100) == pytest.approx(0.01 * (1 + 1e-4 * 100) ** -0.75)
    assert lr_at(mobilenet, 1000) == mobilenet.lr == 1e-5


def test_supported_features_parse():
    from edgebench.backends.mnn.runtime import supported_features

    line = "The device supports: i8sdot:1, fp16:0, i8mm: 0, sve2: 0, sme2: 0"
    assert supported_features(line) == {"i8sdot": True, "fp16": False, "i8mm": False, "sve2": False, "sme2": False}


def test_mnn_prints_never_reach_stdout(tmp_path):
    """Importing MNN and converting print to fd 1 from C++; inside the backend only our own line reaches stdout."""
    require_mnn()
    import torch

    from edgebench.graph.export import export_module
    from edgebench.workloads import get_workload

    export_module(get_workload("lenet").build_model(10, (1, 28, 28)), torch.zeros(1, 1, 28, 28), tmp_path / "m.onnx")
    code = textwrap.dedent(
        f"""
        from edgebench.backends.mnn.runtime import load
        from edgebench.backends.mnn.convert import convert
        mnn, line = load()
        convert({str(tmp_path / "m.onnx")!r}, {str(tmp_path / "m.mnn")!r}, for_training=False)
        print("ours:", line)
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == [f"ours: {run.stdout.split('ours: ', 1)[1].strip()}"]
    assert "device supports" in run.stdout  # captured, and printed only by us
    unguarded = subprocess.run(
        [sys.executable, "-c", "import MNN"], capture_output=True, text=True, timeout=60
    )  # the trap itself: MNN's own import prints on stdout
    assert "device supports" in unguarded.stdout
