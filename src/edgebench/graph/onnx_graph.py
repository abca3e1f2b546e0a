"""The layer graph of a user's ONNX file for the partition analyzer, from the file's own graph and shapes.

A zoo model's graph is recorded from a real torch forward pass (:mod:`edgebench.graph.torch_graph`); a model
file has no torch code, but its ONNX graph already says which node reads which tensor, and ONNX's shape inference
(at the trial's input shapes) gives every tensor's size.  The units are the file's scopes (the modules an exporter
named its nodes after, ``/features/features.3/Conv`` -> ``features.3``; the innermost scope of each node), in the
order the graph first runs them, so their names are the layer trace's labels on both ONNX Runtime and MNN
(:func:`edgebench.graph.scopes.scope_tree`).  Nodes outside every scope (a root-level ``Add``) are the
root's own time, charged to the unit that ran last before them (:class:`ContainerShare`), as a torch container's
own ops are.  A file whose nodes carry no scopes cannot be matched to the trace's rows: refused in one line.
Needs the ``onnx`` package (shape inference), imported here only.

The file comes as the backends read it (:class:`edgebench.backends.model_file.ModelFile`, its feeds resolved at the
trial's shapes); this module reads only the few fields :class:`ModelGraph` and :class:`Feed` name, so the model graph
stays below the backends.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from edgebench.graph.layer_graph import INPUT, ContainerShare, GraphTensor, LayerGraph, Unit
from edgebench.graph.onnx_proto import ELEM_TYPES, NodeSpec, ValueSpec
from edgebench.graph.scopes import module_of_node, scope_tree


class ModelGraph(Protocol):
    """What :func:`file_graph` reads of a model file (:class:`edgebench.backends.model_file.ModelFile`)."""

    @property
    def path(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def outputs(self) -> Sequence[ValueSpec]: ...
    @property
    def nodes(self) -> Sequence[NodeSpec]: ...


class Feed(Protocol):
    """One input at the trial's shape (:class:`edgebench.backends.model_file.Feed`): batch first."""

    @property
    def name(self) -> str: ...
    @property
    def dims(self) -> tuple[int, ...]: ...


#: numpy dtype name -> (bytes per element, floating).
_SIZES = {"float32": (4, True), "float16": (2, True), "bfloat16": (2, True), "float64": (8, True),
          "int8": (1, False), "uint8": (1, False), "int16": (2, False), "uint16": (2, False), "int32": (4, False),
          "uint32": (4, False), "int64": (8, False), "uint64": (8, False), "bool": (1, False)}  # fmt: skip


def tensor_shapes(path: str, feeds: Sequence[Feed]) -> dict[str, tuple[tuple[int, ...], str]]:
    """Every value's shape and dtype at the trial's input shapes (ONNX shape inference, data propagation on)."""
    try:
        import onnx
        from onnx import shape_inference
    except ImportError:
        raise ValueError("partitioning an ONNX file needs the onnx package: pip install 'edgebench[onnx]'") from None

    model = onnx.load(path, load_external_data=False)
    fed = {f.name: f for f in feeds}
    for value in model.graph.input:
        if value.name in fed:
            dims = value.type.tensor_type.shape.dim
            for dim, size in zip(dims, fed[value.name].dims, strict=False):
                dim.Clear()
                dim.dim_value = size
    inferred = shape_inference.infer_shapes(model, data_prop=True)
    shapes: dict[str, tuple[tuple[int, ...], str]] = {}
    for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        tensor = value.type.tensor_type
        if not tensor.HasField("shape") or any(not d.HasField("dim_value") for d in tensor.shape.dim):
            continue
        shapes[value.name] = (tuple(d.dim_value for d in tensor.shape.dim), ELEM_TYPES.get(tensor.elem_type, "?"))
    return shapes


def file_graph(model: ModelGraph, feeds: Sequence[Feed], batch_size: int) -> LayerGraph:
    """The cut graph of ``model`` at ``feeds``; ``ValueError`` (one line) where the graph does not allow one."""
    name = Path(model.path).name
    if model.format == "tflite":
        raise ValueError(
            f"{name}: a .tflite file's graph is not cut (edgebench reads cut graphs from ONNX files); partition the "
            "zoo model, or the .onnx file it came from"
        )
    if model.format != "onnx":
        raise ValueError(
            f"{name}: an .mnn file's graph is not readable without MNN's converter, so it cannot be cut; "
            "partition the .onnx file it came from"
        )
    tree = scope_tree([n.name for n in model.nodes], Path(model.path).stem)
    qualified = set(tree["qualified"])
    if not qualified:
        raise ValueError(
            f"{name}: its node names carry no scopes (/block/Conv), so the trace's rows cannot be matched to cut "
            "points; export it with scoped names (torch.onnx.export does)"
        )
    shapes = tensor_shapes(model.path, feeds)
    initializers = _initializer_sizes(model.path)
    # Constants: weights, and what nodes make from weights alone (an exporter's Identity of a shared bias, a
    # Constant): they are in the file on both sides, never traffic, and no unit's work.
    constant = set(initializers)
    for node in model.nodes:
        if all(v in constant or not v for v in node.inputs):
            constant.update(node.outputs)
    nodes = [n for n in model.nodes if not set(n.outputs) <= constant]
    node_unit: list[int | None] = []
    units: list[Unit] = []
    index: dict[str, int] = {}
    for node in nodes:
        scope = module_of_node(node.name, qualified)
        if scope is None:
            node_unit.append(None)
            continue
        if scope not in index:
            index[scope] = len(units)
            units.append(Unit(name=scope, module=scope, type="scope"))
        node_unit.append(index[scope])
    # Parameters: initializer elements read by each unit (a weight shared by two units counts once, first use).
    params: Counter[int] = Counter()
    seen: set[str] = set()
    for node, unit in zip(nodes, node_unit, strict=True):
        for value in node.inputs:
            if unit is not None and value in initializers and value not in seen:
                seen.add(value)
                params[unit] += initializers[value]
    units = [Unit(u.name, u.module, u.type, params[i]) for i, u in enumerate(units)]
    # Root-level nodes: hosted by the unit that ran last before them (the first unit before any has run).
    host: list[int] = []
    last = 0
    for unit in node_unit:
        last = unit if unit is not None else last
        host.append(last)
    root_hosts = Counter(h for h, u in zip(host, node_unit, strict=True) if u is None)
    total = sum(root_hosts.values())
    shares = tuple(ContainerShare(tree["names"][0], u, n / total) for u, n in sorted(root_hosts.items()))
    producer = {f.name: INPUT for f in feeds}
    for node, h in zip(nodes, host, strict=True):
        for out in node.outputs:
            producer[out] = h
    readers: dict[str, set[int]] = {}
    for node, h in zip(nodes, host, strict=True):
        for value in node.inputs:
            if value in producer:
                readers.setdefault(value, set()).add(h)
    outputs = {o.name for o in model.outputs}
    tensors = []
    for value, made_by in producer.items():
        consumers = tuple(sorted(c for c in readers.get(value, ()) if c != made_by))
        if not consumers and value not in outputs:
            continue
        if value not in shapes:
            raise ValueError(f"{name}: shape inference leaves tensor {value!r} without a full shape, so its cut "
                             "size is unknown")  # fmt: skip
        dims, dtype = shapes[value]
        itemsize, floating = _SIZES.get(dtype, (4, True))
        numel = 1
        for d in dims:
            numel *= d
        tensors.append(GraphTensor(made_by, consumers, numel, dtype, itemsize, floating, False, value in outputs))
    notes = ("units are the file's scopes; tensor sizes from ONNX shape inference at the trial's input shapes",)
    return LayerGraph(name, batch_size, tuple(units), tuple(tensors), shares, 0, notes)


def _initializer_sizes(path: str) -> dict[str, int]:
    import onnx

    model = onnx.load(path, load_external_data=False)
    sizes = {}
    for init in model.graph.initializer:
        count = 1
        for d in init.dims:
            count *= d
        sizes[init.name] = count
    return sizes
