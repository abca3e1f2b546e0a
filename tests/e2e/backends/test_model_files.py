"""Model files through the command line: refused in one line where they cannot run, run on ONNX Runtime and MNN with
traces, partitioned from the file's own graph, and DNNTune's Table 4 across devices."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from edgebench.backends import model_file as mf
from tests.conftest import json_out, require_onnxruntime
from tests.paths import FIXTURES, ROOT

FIXTURE = FIXTURES / "models" / "two_inputs.onnx"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--model", "no/such/model.onnx"], "--model: no/such/model.onnx: no such file"),
        (["--model", str(FIXTURE.parent) + "/"], "/models/ is not a file"),
        (["--model", str(ROOT / "README.md")], "is not a model file edgebench runs"),
        (["--model", str(FIXTURE), "--backend", "torch"], "--backend: the torch backend builds zoo models"),
        (["--model", str(FIXTURE), "--mode", "train"], "--mode: a model file is an inference graph"),
        (["--model", str(FIXTURE), "--input-name", "c"], "--input-name: the file has no input 'c'"),
        (["--model", str(FIXTURE), "--output-name", "logits"], "--output-name: the file has no output 'logits'"),
        (["--model", str(FIXTURE), "--data", "mnist"], "--data: a model file brings its own graph"),
        (["--model", str(FIXTURE), "--precision", "int8"], "--precision: the onnxruntime backend quantizes only"),
        (["--input-name", "a"], "--input-name: names a model file's tensor"),
    ],
)
def test_what_a_model_file_cannot_do_is_one_line(cli, args, words, tmp_path):
    proc = cli("run", "--no-store", *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_file_that_is_not_onnx_is_one_line(cli, tmp_path):
    fake = tmp_path / "model.onnx"
    fake.write_text("not a model at all\n")
    proc = cli("run", "--no-store", "--model", str(fake))
    assert proc.returncode == 2 and f"--model: {fake} is not an ONNX model" in proc.stderr


def test_an_onnx_file_runs_on_onnxruntime_with_layers_and_partitions(cli, tmp_path):
    require_onnxruntime()
    model = tmp_path / "two_inputs.onnx"
    shutil.copy(FIXTURE, model)
    proc = cli("run", "--model", str(model), "-b", "3", "--steps", "3", "--warmup", "1", "--trace", "layers",
               "--output-name", "y", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json_out(proc)
    trial = result["trial"]
    assert trial["backend"] == "onnxruntime" and trial["mode"] == "infer" and trial["batch_size"] == 3
    assert trial["model"] == "two_inputs.onnx" and trial["model_file"] == str(model)
    assert trial["model_sha256"] == mf.file_digest(model)
    assert result["workload"]["input_shape"] == [8] and result["workload"]["params"] == 27
    assert result["device"]["extra"]["model_file_feeds"] == {"a": [3, 8], "b": [3, 8]}
    layers = cli("layers", result["trial_id"])
    assert layers.returncode == 0, layers.stderr
    assert "  mix  " in layers.stdout  # ORT fuses fc's MatMul + Add (+ Relu) into a node it names itself
    part = cli("partition", "--model", str(model), "--json")
    assert part.returncode == 0, part.stderr
    analysis = json.loads(part.stdout)
    assert analysis["model"] == "two_inputs.onnx" and [r["layer"] for r in analysis["rows"]][1:] == ["mix", "fc", "act"]
    # The file changed since: the stored trial no longer describes it, and the analysis says so.
    model.write_bytes(model.read_bytes() + b"\x00")
    stale = cli("partition", "--trial", result["trial_id"])
    assert stale.returncode == 2 and "changed since trial" in stale.stderr


def test_an_exported_zoo_model_runs_on_mnn_from_onnx_and_from_mnn(cli, tmp_path, onnx_cache):
    from tests.conftest import require_mnn

    require_mnn()
    from edgebench.backends.mnn.convert import convert
    from edgebench.graph.export import export_workload

    onnx_path = tmp_path / "lenet.onnx"
    shutil.copy(export_workload("lenet", batch_size=2).path, onnx_path)
    proc = cli("run", "--model", str(onnx_path), "--backend", "mnn", "--steps", "3", "--warmup", "1",
               "--trace", "layers", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json_out(proc)  # stdout is the JSON alone: MNN's converter and runtime prints went to stderr
    assert result["trial"]["backend"] == "mnn" and result["trial"]["batch_size"] == 2  # the file's own batch
    assert result["device"]["extra"]["mnn_conversion"].startswith("ONNX -> MNN converter")
    assert result["device"]["extra"]["mnn_worker_imported_torch"] is False
    layers = cli("layers", result["trial_id"], "--json")
    assert layers.returncode == 0, layers.stderr
    names = {row["name"] for row in json.loads(layers.stdout)["rows"]}
    assert {"features.0", "features.3"} <= names  # the ONNX scopes, MNN's ops under them
    part = cli("partition", "--trial", result["trial_id"], "--json")
    assert part.returncode == 0, part.stderr
    assert [r["layer"] for r in json.loads(part.stdout)["rows"]][1:3] == ["features.0", "features.1"]

    mnn_path = tmp_path / "lenet.mnn"
    convert(onnx_path, mnn_path, for_training=False)
    proc = cli("run", "--model", str(mnn_path), "-b", "3", "--steps", "2", "--warmup", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json_out(proc)
    assert result["trial"]["backend"] == "mnn" and result["workload"]["input_shape"] == [1, 28, 28]
    assert result["device"]["extra"]["mnn_conversion"] == "none: the .mnn file as given"
    refused = cli("run", "--model", str(mnn_path), "--backend", "onnxruntime")
    assert refused.returncode == 2 and "the MNN file lenet.mnn runs on mnn" in refused.stderr
    traced = cli("run", "--model", str(mnn_path), "--steps", "2", "--warmup", "1", "--trace", "layers", "--json")
    assert traced.returncode == 0, traced.stderr
    part = cli("partition", "--trial", json_out(traced)["trial_id"])
    assert part.returncode == 2 and "an .mnn file's graph is not readable" in part.stderr


def dense_model(path: Path, width: int = 512, layers: int = 3) -> Path:
    """An ONNX file of ``layers`` scoped MatMul + Relu blocks: heavy enough (about a millisecond a pass) for the
    sampler to see the worker's CPU use, which an energy estimate needs."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, value = [], [], "x"
    for i in range(layers):
        weight = f"block{i}.weight"
        inits.append(numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32) * 0.05, weight))
        nodes.append(helper.make_node("MatMul", [value, weight], [f"h{i}"], name=f"/block{i}/MatMul"))
        nodes.append(helper.make_node("Relu", [f"h{i}"], [f"r{i}"], name=f"/block{i}/Relu"))
        value = f"r{i}"
    graph = helper.make_graph(
        nodes, "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", width])],
        [helper.make_tensor_value_info(value, TensorProto.FLOAT, ["N", width])], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_table4_has_a_row_per_device_with_the_saving_and_its_basis(cli, tmp_path):
    """DNNTune's Table 4 from stored traced trials of three device records (two captured trees and this host)."""
    require_onnxruntime()
    model = dense_model(tmp_path / "dense.onnx", width=1024)
    trees = FIXTURES / "sysfs"
    # --min-time: the estimate needs the worker's CPU share, which a second of steps resolves on any machine
    common = ["--model", str(model), "-b", "64", "--steps", "20", "--min-time", "1s", "--warmup", "2",
              "--trace", "layers"]  # fmt: skip
    ids = {}
    for name, extra in (("rpi4", ["--idle", "0", "--estimate-energy", "idle=2W,max=6W"]),
                        ("jetson_tx2", ["--idle", "0.5s"]),  # a measured idle baseline: the rails' own
                        ("local", ["--idle", "0", "--estimate-energy", "idle=5W,max=25W"])):  # fmt: skip
        tree = [] if name == "local" else ["--sysfs-root", str(trees / name)]
        proc = cli("run", *common, *tree, *extra, "--json")
        assert proc.returncode == 0, proc.stderr
        ids[name] = json_out(proc)["trial_id"]
    png = tmp_path / "table4.png"
    proc = cli("partition", "--model", str(model), "--table4", "--objective", "energy", "--network", "3g",
               "--plot", str(png), "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    table = json.loads(proc.stdout)
    rows = {r["trial_id"]: r for r in table["rows"]}
    assert set(rows) == set(ids.values()), (ids, table["notes"])
    assert table["objective"] == "energy" and table["network"] == "3g"
    assert rows[ids["rpi4"]]["device"].endswith("[replayed rpi4]")
    assert rows[ids["jetson_tx2"]]["device"].endswith("[replayed jetson_tx2]")
    assert rows[ids["rpi4"]]["basis"] == "estimated" and rows[ids["jetson_tx2"]]["basis"] == "measured"
    for row in table["rows"]:
        assert row["mobile_cloud"] <= min(row["mobile_only"], row["cloud_only"]) + 1e-12
        if row["saving_pct"] is not None:
            expected = (row["mobile_only"] - row["mobile_cloud"]) / row["mobile_only"] * 100
            assert row["saving_pct"] == pytest.approx(expected)
    # The copied TX2 tree's power never changes, so its energy above idle is 0: no saving is stated, and it says so.
    assert rows[ids["jetson_tx2"]]["saving_pct"] is None
    assert any("jetson_tx2" in n and "no saving is stated" in n for n in table["notes"])
    assert png.stat().st_size > 0
    text = cli("partition", "--model", str(model), "--table4")
    assert text.returncode == 0 and "latency saving" in text.stdout and "vm [rpi4]" not in text.stderr
    none = cli("partition", "--model", "lenet", "--table4")
    assert none.returncode == 2 and "--table4: no stored layer-traced infer trial of lenet" in none.stderr
