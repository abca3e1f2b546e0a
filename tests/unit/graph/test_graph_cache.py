"""The layer graphs ``partition`` cuts are recorded once per model code, batch, input and precision, then read."""

import json
import sys

import pytest

from edgebench.graph import torch_graph
from edgebench.graph.graph_cache import cached_workload_graph
from edgebench.graph.layer_graph import LayerGraph
from tests.paths import BYO_MODELS


def kept_graph(path):
    """The graph a sealed cache file holds (see :func:`edgebench.host.files.write_sealed`)."""
    return LayerGraph.from_json(json.loads(json.loads(path.read_text())["body"])["graph"])


def test_a_graph_is_recorded_once_then_read_back_equal(tmp_path, monkeypatch):
    first = cached_workload_graph("resnet50", 1, precision="bf16", cache_dir=tmp_path)
    (kept,) = tmp_path.glob("resnet50-b1-bf16-*.json")
    assert kept_graph(kept) == first  # every field survives JSON, tuples included
    assert first.shares and any(len(t.consumers) > 1 for t in first.tensors)

    def no_recording(*args, **kwargs):
        raise AssertionError("recorded again although an equal graph is cached")

    monkeypatch.setattr(torch_graph, "workload_graph", no_recording)
    assert cached_workload_graph("resnet50", 1, precision="bf16", cache_dir=tmp_path) == first
    # the default input named or not is the same graph; another batch or precision is another
    assert cached_workload_graph("resnet50", 1, precision="bf16", input_shape=(3, 224, 224), cache_dir=tmp_path)
    with pytest.raises(AssertionError, match="recorded again"):
        cached_workload_graph("resnet50", 2, precision="bf16", cache_dir=tmp_path)


def test_an_unreadable_or_stale_file_is_recorded_again(tmp_path):
    graph = cached_workload_graph("lenet", 2, cache_dir=tmp_path)
    (kept,) = tmp_path.glob("lenet-b2-fp32-*.json")
    sealed = json.loads(kept.read_text())
    empty = json.dumps({**json.loads(graph.to_json()), "units": [], "tensors": [], "shares": []})
    edited = {**sealed, "body": json.dumps({"graph": empty})}  # its seal no longer holds
    for text in ("{torn", '{"model": "lenet"}', graph.to_json(), json.dumps(edited), ""):
        kept.write_text(text)  # a torn write, another layout, an unsealed graph, an emptied one, nothing
        assert cached_workload_graph("lenet", 2, cache_dir=tmp_path) == graph
        assert kept_graph(kept) == graph


@pytest.mark.parametrize("damage", ["no units", "tensor 999", "consumer before producer", "size not a count"])
def test_a_sealed_graph_that_is_no_graph_is_recorded_again(tmp_path, damage):
    """Issue 39: even sealed (a forger can seal, the digest has no secret), a graph the solver cannot cut is not
    used: an empty one made ``partition`` print "best point 0: 0.00 ms", one pointing at tensor 999 raised."""
    from edgebench.host.files import write_sealed

    graph = cached_workload_graph("lenet", 2, cache_dir=tmp_path)
    (kept,) = tmp_path.glob("lenet-b2-fp32-*.json")
    doc = json.loads(graph.to_json())
    if damage == "no units":
        doc["units"], doc["tensors"], doc["shares"] = [], [], []
    elif damage == "tensor 999":
        doc["tensors"][0]["consumers"] = [999]
    elif damage == "consumer before producer":
        doc["tensors"][1]["consumers"] = [doc["tensors"][1]["producer"]]
    else:
        doc["tensors"][0]["numel"] = "lots"
    with pytest.raises(ValueError):
        LayerGraph.from_json(json.dumps(doc))
    write_sealed(kept, {"graph": json.dumps(doc)}, json.loads(kept.read_text())["derived_from"])
    assert cached_workload_graph("lenet", 2, cache_dir=tmp_path) == graph


def test_a_users_own_model_is_never_cached(tmp_path, monkeypatch):
    folder, cache = tmp_path / "models", tmp_path / "cache"
    folder.mkdir()
    (folder / "byo_models.py").write_text(BYO_MODELS.read_text())
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop("byo_models", None)
    monkeypatch.setenv("EDGEBENCH_NAMED_MODELS", "byo_models:tiny")  # as --model byo_models:tiny names it
    try:
        graph = cached_workload_graph("byo_models:tiny", 2, cache_dir=cache)
    finally:
        sys.modules.pop("byo_models", None)
    assert graph.units and not cache.exists()
