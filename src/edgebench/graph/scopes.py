"""ONNX node names back to the model's modules: the layer labels a runtime's trace and a file's cut graph share.

An exporter names each node after the module scopes it ran in (``/features/features.0/Conv``, as torch's
TorchScript exporter and many converters write them), and the runtimes keep the names (ONNX Runtime's profile; MNN
names each op after its node's output).  :func:`module_of_node` maps a node to the module of a model whose modules
are known (a zoo model's export); :func:`scope_tree` builds the labels from the names alone (a user's file).  The
runtime tracers (:mod:`edgebench.backends.onnxruntime.profile`, :mod:`edgebench.backends.mnn.trace`) and the cut graph
of a model file (:mod:`.onnx_graph`) read names through these two, so their rows line up.
"""

from __future__ import annotations

import re
from typing import Any

_SUFFIX = re.compile(r"_\d+$")


def module_of_node(node_name: str, modules: dict[str, str] | set[str]) -> str | None:
    """The qualified module a TorchScript-exported node ran in, or None (a node outside any module, e.g. a
    functional ``Add`` at the root).

    ``/stages/stages.0/stages.0.0/downsample/downsample.0/Conv`` -> ``stages.0.0.downsample.0``: each scope is a
    child's attribute name (``conv1``), or, for a numbered child of a container, the container's scope and the
    number (``stages.0`` under ``stages``, ``downsample.0`` under ``downsample``); a module called more than once
    gets ``_1``, ``_2`` appended to its scope (``relu_1`` -> ``relu``).
    """
    parts = node_name.strip("/").split("/")[:-1]
    qual, previous = "", ""
    for part in parts:
        if previous and part.startswith(previous + "."):
            candidate = qual + part[len(previous) :]
        else:
            candidate = f"{qual}.{part}" if qual else part
        if candidate not in modules:
            stripped = _SUFFIX.sub("", candidate)
            candidate = stripped if stripped in modules else candidate
        qual, previous = candidate, part
    return qual if qual in modules else None


def scope_tree(node_names: list[str], root: str) -> dict[str, list[Any]]:
    """Layer labels from node names that carry scopes (``/features/features.0/Conv``, as torch's exporter and many
    converters write them): one label per scope, nested as the names nest, in the shape the tracers use
    (``names``, ``types``, ``parents``, ``qualified``).  Names without ``/`` give only the root."""
    parent_of: dict[str, str | None] = {}
    for node in node_names:
        parts = node.strip("/").split("/")[:-1]
        qual, previous = "", ""
        for part in parts:
            parent = qual or None
            if previous and part.startswith(previous + "."):
                qual = qual + part[len(previous) :]
            else:
                qual = f"{qual}.{part}" if qual else part
            parent_of.setdefault(qual, parent)
            previous = part
    children: dict[str | None, list[str]] = {}
    for qual, parent in parent_of.items():  # in the order the graph first reaches them
        children.setdefault(parent, []).append(qual)
    names, types, parents = [root], [root], [-1]

    def visit(qual: str, parent_label: int) -> None:  # pre-order, as the tracers list modules
        label = len(names)
        names.append(qual)
        types.append("scope")
        parents.append(parent_label)
        for child in children.get(qual, []):
            visit(child, label)

    for top in children.get(None, []):
        visit(top, 0)
    return {"names": names, "types": types, "parents": parents, "qualified": sorted(parent_of)}
