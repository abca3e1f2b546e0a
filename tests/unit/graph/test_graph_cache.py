"""The layer graphs ``partition`` cuts are recorded once per model code, batch, input and precision, then read."""

import sys

import pytest

from edgebench.graph import torch_graph
from edgebench.graph.graph_cache import cached_workload_graph
from edgebench.graph.layer_graph import LayerGraph
from tests.paths import BYO_MODELS


def test_a_graph_is_recorded_once_then_read_back_equal(tmp_path, monkeypatch):
    first = cached_workload_graph("resnet50", 1, precision="bf16", cache_dir=tmp_path)
    (kept,) = tmp_path.glob("resnet50-b1-bf16-*.json")
    assert LayerGraph.from_json(kept.read_text()) == first  # every field survives JSON, tuples included
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
    for text in ("{torn", '{"model": "lenet"}'):  # a torn write; a file of another LayerGraph layout
        kept.write_text(text)
        assert cached_workload_graph("lenet", 2, cache_dir=tmp_path) == graph
        assert LayerGraph.from_json(kept.read_text()) == graph


def test_a_users_own_model_is_never_cached(tmp_path, monkeypatch):
    folder, cache = tmp_path / "models", tmp_path / "cache"
    folder.mkdir()
    (folder / "byo_models.py").write_text(BYO_MODELS.read_text())
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop("byo_models", None)
    try:
        graph = cached_workload_graph("byo_models:tiny", 2, cache_dir=cache)
    finally:
        sys.modules.pop("byo_models", None)
    assert graph.units and not cache.exists()
