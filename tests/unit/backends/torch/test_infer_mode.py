"""``--mode infer`` and ``--precision int8`` on the torch backend, and how both are declared and refused."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from edgebench.config.sweep_file import load_config
from edgebench.host.sysfs import SysFS
from edgebench.records.trial import Trial
from edgebench.sweep.plan import plan


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"precision": "int8"}, "only inference runs: add --mode infer"),
        ({"mode": "infer", "until_accuracy": 0.9, "data": "mnist"}, "an inference trial (--mode infer) never does"),
        ({"mode": "infer", "precision": "int8", "device": "cuda"}, "runs on the CPU only"),
    ],
)
def test_what_an_inference_or_int8_trial_cannot_be(values, words):
    with pytest.raises(ValidationError, match=words.replace("(", r"\(").replace(")", r"\)")):
        Trial(**values)


def test_mode_is_a_sweep_axis_and_dnntune_names_backends(tmp_path):
    config = load_config(None, ["batch_sizes=2", "mode=[train, infer]"]).config
    trials = [p.trial for p in plan(config, source=None, sysfs=SysFS("/nonexistent"), allowed=(0,)).trials]
    assert {t.mode for t in trials} == {"train", "infer"}
    path = tmp_path / "dnntune.yaml"
    path.write_text("model: {name: lenet, data_type: int8}\nprocessing: {framework: 'PyTorch, ORT'}\nmode: infer\n")
    config = load_config(path).config
    trials = [p.trial for p in plan(config, source=None, sysfs=SysFS("/nonexistent"), allowed=(0,)).trials]
    assert {(t.backend, t.precision, t.mode) for t in trials} == {("torch", "int8", "infer"),
                                                                  ("onnxruntime", "int8", "infer")}  # fmt: skip


def _rendered(table) -> str:
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(table)
    return console.export_text()


def test_an_inference_trial_is_shown_as_inference_with_its_backend_and_framework():
    """Seen: `--mode infer` printing `train step (ms)`, no backend or mode in the header, `torch None` for ORT."""
    from edgebench.report.summary import summary_table
    from tests.factories import result

    ort = result("20260103-000002-bbbb", [2.0, 2.1, 2.2], backend="onnxruntime", mode="infer", infer_ms=[2.0, 2.1, 2.2],
                 env={"hostname": "h", "onnxruntime": "1.18.0", "cpu_model": "cpu", "kernel": "6.1"})  # fmt: skip
    text = _rendered(summary_table(ort))
    assert "onnxruntime fp32 inference" in text.splitlines()[0]
    assert "inference step (ms)" in text and "train step" not in text
    assert "onnxruntime 1.18.0" in text and "torch None" not in text
    torch = _rendered(summary_table(result("20260103-000001-aaaa", [10.0, 11.0])))
    assert "torch fp32 training" in torch.splitlines()[0] and "train step (ms)" in torch


def test_trials_list_names_mode_and_precision():
    from edgebench.report.trials_list import trials_table
    from tests.factories import result

    train = result("20260103-000001-aaaa", [10.0, 11.0])
    infer = result("20260103-000002-bbbb", [2.0, 2.1], mode="infer", precision="int8", infer_ms=[2.0, 2.1])
    text = _rendered(trials_table([train, infer]))
    header = next(line for line in text.splitlines() if "trial" in line and "model" in line)
    assert "mode" in header and "prec" in header and "infer" in text and "int8" in text
    same = _rendered(trials_table([train]))
    assert "(all torch, train, fp32, local," in same  # shared by every listed trial: named once in the title
