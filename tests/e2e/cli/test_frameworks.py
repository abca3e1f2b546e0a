"""``edgebench frameworks``: DNNTune's table 5, every cell a stored trial or a stated reason."""

from __future__ import annotations

import pytest

from edgebench.store import Store
from tests.conftest import require_onnxruntime

require_onnxruntime()


@pytest.fixture(scope="module")
def table(cli_factory, onnx_cache):
    cli = cli_factory("frameworks")
    args = ["frameworks", "--models", "lenet", "--backends", "torch,onnxruntime,mace", "--precisions", "fp32,int8",
            "-b", "2", "--steps", "2", "--warmup", "1", "--json"]  # fmt: skip
    return cli.store_path, cli.json(*args, timeout=900)


def test_every_measured_cell_is_a_stored_trial(table):
    store, out = table
    cells = {(c["backend"], c["precision"]): c for c in out["cells"]}
    assert out["mode"] == "infer" and len(cells) == 6
    measured = [c for c in out["cells"] if c["trial_id"]]
    assert {(c["backend"], c["precision"]) for c in measured} == {(b, p) for b in ("torch", "onnxruntime")
                                                                  for p in ("fp32", "int8")}  # fmt: skip
    with Store(store) as db:
        stored = {r.trial_id: r for r in db.trials()}
    for cell in measured:
        result = stored[cell["trial_id"]]
        assert (
            result.trial.backend == cell["backend"]
            and result.trial.precision == cell["precision"]
            and result.trial.mode == "infer"
        )
        assert cell["latency_ms"] == pytest.approx(result.latency.step_ms.median)  # a repeat's value: its median
        assert cell["mean_step_ms"] == pytest.approx(result.latency.step_ms.mean) and cell["repeats"] == 1
        assert cell["peak_memory_bytes"] == result.memory.peak_bytes
    assert cells[("torch", "int8")]["top1_agreement"] is not None and cells[("torch", "fp32")]["top1_agreement"] is None
    torch_int8 = stored[cells[("torch", "int8")]["trial_id"]]
    assert "torch.ao.quantization" in torch_int8.quantization.method and torch_int8.quantization.real_data
    assert torch_int8.device.extra["quantized_engine"] in ("x86", "fbgemm", "onednn", "qnnpack")
    assert "QDQ" in stored[cells[("onnxruntime", "int8")]["trial_id"]].quantization.method
    assert cells[("mace", "fp32")]["reason"] == "mace is not a registered backend of this edgebench"
    assert out["energy_note"]  # no power sensor here: the table says why the column is empty
    # one repeat per cell cannot tell a clear best: no star on latency or memory, and the notes say why
    assert not any({"latency_ms", "peak_memory_bytes"} & set(c["best"]) for c in measured)
    # (or, beside the suite's other worker, that disturbed repeats were left out of the pick)
    assert any(n.startswith("lenet latency: lowest latency:") and "1 repeat each" in n for n in out["notes"]) or any(
        n.startswith("lenet ") and "trials as disturbed" in n for n in out["notes"]
    ), out["notes"]


def test_a_combination_that_cannot_run_is_a_reason_not_a_crash(cli):
    args = ["frameworks", "--models", "lenet", "--mode", "train", "--backends", "torch,onnxruntime,mace",
            "--precisions", "int8", "--json"]  # fmt: skip
    reasons = {(c["backend"], c["precision"]): c["reason"] for c in cli.json(*args)["cells"]}
    assert reasons == {
        ("torch", "int8"): "'int8' is post-training quantization, which only inference runs: add --mode infer",
        ("onnxruntime", "int8"): "the onnxruntime backend cannot run mode 'train'; it offers: infer",
        ("mace", "int8"): "mace is not a registered backend of this edgebench",
    }
