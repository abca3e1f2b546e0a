"""What an ONNX file declares (inputs, outputs, nodes, parameter count), read without the ``onnx`` package.

Why a reader of our own: a model file is checked where the user's input enters (``edgebench run --model m.onnx``
must refuse a missing input shape or a file that is no model in one line, before any worker starts), and the
core install and the ``run`` path import no optional framework.  ONNX files are protocol buffers
(``onnx/onnx.proto``); only the few messages below are walked, by their field numbers, and initializers' raw bytes
are skipped, never copied, so a large model reads in milliseconds.  Part of the model graph: the checks of a user's
file (:mod:`edgebench.backends.model_file`) and its cut graph (:mod:`.onnx_graph`) both read a file through it.

Field numbers (onnx.proto, IR version 3 and later): ModelProto.graph = 7; GraphProto.node = 1, initializer = 5,
input = 11, output = 12; NodeProto.input = 1, output = 2, name = 3, op_type = 4; ValueInfoProto.name = 1, type = 2;
TypeProto.tensor_type = 1; TypeProto.Tensor.elem_type = 1, shape = 2; TensorShapeProto.dim = 1;
Dimension.dim_value = 1, dim_param = 2; TensorProto.dims = 1, name = 8.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: ONNX ``TensorProto.DataType`` -> numpy's name for it.
ELEM_TYPES = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    8: "string",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
    16: "bfloat16",
}


class NotOnnx(ValueError):
    """The bytes are not an ONNX model (the message says what was wrong)."""


@dataclass(frozen=True)
class ValueSpec:
    """A graph input or output as the file declares it: ``None`` for a dimension named (``N``) or unknown."""

    name: str
    dims: tuple[int | None, ...]
    dtype: str


@dataclass(frozen=True)
class NodeSpec:
    name: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class OnnxGraph:
    #: Graph inputs that are fed (initializers listed as inputs by old exporters are left out).
    inputs: tuple[ValueSpec, ...]
    outputs: tuple[ValueSpec, ...]
    nodes: tuple[NodeSpec, ...]
    #: Elements of every initializer (the parameter count a runtime loads).
    params: int


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise NotOnnx("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise NotOnnx("varint too long")


def fields(buf: memoryview) -> Iterator[tuple[int, int, int | memoryview]]:
    """``(field number, wire type, value)`` of one message: an int for varints and fixed-width values, the bytes
    of a length-delimited field."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise NotOnnx("field number 0")
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield number, wire, value
        elif wire == 1:
            if pos + 8 > len(buf):
                raise NotOnnx("truncated 64-bit field")
            yield number, wire, int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise NotOnnx("a field runs past the end of the file")
            yield number, wire, buf[pos : pos + size]
            pos += size
        elif wire == 5:
            if pos + 4 > len(buf):
                raise NotOnnx("truncated 32-bit field")
            yield number, wire, int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise NotOnnx(f"wire type {wire} is not protocol buffers")


def _text(value: int | memoryview) -> str:
    if not isinstance(value, memoryview):
        raise NotOnnx("a name is not text")
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise NotOnnx("a name is not UTF-8 text") from None


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _value_info(buf: memoryview) -> ValueSpec:
    name, dims, dtype = "", [], "unknown"
    for number, _, value in fields(buf):
        if number == 1:
            name = _text(value)
        elif number == 2 and isinstance(value, memoryview):
            for t_number, _, t_value in fields(value):
                if t_number != 1 or not isinstance(t_value, memoryview):
                    continue  # sequences, maps, optionals: no tensor shape to read
                for k, _, v in fields(t_value):
                    if k == 1 and isinstance(v, int):
                        dtype = ELEM_TYPES.get(v, f"onnx type {v}")
                    elif k == 2 and isinstance(v, memoryview):
                        for d_number, _, d_value in fields(v):
                            if d_number == 1 and isinstance(d_value, memoryview):
                                dims.append(_dimension(d_value))
    return ValueSpec(name, tuple(dims), dtype)


def _dimension(buf: memoryview) -> int | None:
    for number, _, value in fields(buf):
        if number == 1 and isinstance(value, int):
            size = _signed(value)
            return size if size > 0 else None
    return None  # a dim_param (``N``, ``batch``) or nothing: decided at run time


def _node(buf: memoryview) -> NodeSpec:
    name, op, inputs, outputs = "", "", [], []
    for number, _, value in fields(buf):
        if number == 1:
            inputs.append(_text(value))
        elif number == 2:
            outputs.append(_text(value))
        elif number == 3:
            name = _text(value)
        elif number == 4:
            op = _text(value)
    return NodeSpec(name, op, tuple(inputs), tuple(outputs))


def _initializer(buf: memoryview) -> tuple[str, int]:
    name, dims = "", []
    for number, wire, value in fields(buf):
        if number == 1 and wire == 0 and isinstance(value, int):
            dims.append(value)
        elif number == 1 and wire == 2 and isinstance(value, memoryview):  # packed dims
            pos = 0
            while pos < len(value):
                dim, pos = _varint(value, pos)
                dims.append(dim)
        elif number == 8:
            name = _text(value)
    count = 1
    for dim in dims:
        count *= dim
    return name, count


def parse_model(data: bytes) -> OnnxGraph:
    """The graph an ONNX ``ModelProto`` declares; :class:`NotOnnx` when the bytes are not one."""
    buf = memoryview(data)
    graph = None
    has_ir_version = False
    for number, wire, value in fields(buf):
        if number == 1 and wire == 0:
            has_ir_version = True
        elif number == 7 and isinstance(value, memoryview):
            graph = value
    if graph is None or not has_ir_version:
        raise NotOnnx("no ONNX graph in it (no ir_version and graph fields)")
    nodes, inputs, outputs, params, initialized = [], [], [], 0, set()
    for number, _, value in fields(graph):
        if not isinstance(value, memoryview):
            continue
        if number == 1:
            nodes.append(_node(value))
        elif number == 5:
            name, count = _initializer(value)
            initialized.add(name)
            params += count
        elif number == 11:
            inputs.append(_value_info(value))
        elif number == 12:
            outputs.append(_value_info(value))
    if not nodes or not outputs:
        raise NotOnnx("its graph has no nodes or no outputs")
    fed = tuple(i for i in inputs if i.name not in initialized)
    return OnnxGraph(fed, tuple(outputs), tuple(nodes), params)
