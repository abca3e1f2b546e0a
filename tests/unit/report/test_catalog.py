"""The catalog ``edgebench models`` shows: the specs with the counts it is handed, and never a model built for them."""

import ast

import pytest

from edgebench.graph.counts import ModelCounts
from edgebench.report.catalog import describe
from edgebench.workloads import get_workload
from tests.paths import SRC

#: What builds a torch model or imports torch: the report reads counts and graphs as data instead.
TORCH_BACKED = ("torch", "edgebench.backends", "edgebench.zoo", "edgebench.graph")
#: Plain records of the model graph, imported for their types only.
RECORDS = ("edgebench.graph.counts", "edgebench.graph.layer_graph")


def test_the_counts_handed_in_are_what_the_listing_shows():
    resnet = get_workload("resnet50")
    figures = tuple(float(r.value) * 1.01 for r in resnet.references)
    counts = ModelCounts(params=25_557_032, forward_flops=8_000_000, train_flops_per_sample=24_000_000,
                         references=figures)  # fmt: skip
    info = describe(resnet, "cifar10", counts)
    assert (info.preset, info.params, info.forward_flops, info.forward_macs) == ("cifar10", 25_557_032, 8e6, 4e6)
    assert info.train_flops_per_sample == 24_000_000
    assert [r.measured for r in info.references] == list(figures)
    assert all(r.deviation_pct == pytest.approx(1.0) for r in info.references)
    bare = describe(resnet)
    assert bare.params is None and bare.forward_flops is None and bare.train_flops_per_sample is None
    assert all(r.measured is None and r.within_tolerance is None for r in bare.references)


def test_the_report_imports_nothing_that_builds_a_model():
    found = []
    for path in sorted((SRC / "edgebench" / "report").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            found += [f"{path.name}: {n}" for n in names if n.startswith(TORCH_BACKED) and not n.startswith(RECORDS)]
    assert found == []
