"""What a ``.tflite`` file declares, read from its flatbuffer without running it: inputs, outputs, weights, operators.

The file is read through the TFLite schema's generated Python classes that the ``ai-edge-litert`` wheel ships
(``ai_edge_litert.schema_py_generated``, pure Python over ``flatbuffers``), so a file is checked where the user's
input enters (:mod:`edgebench.backends.model_file`) without loading the runtime, and a file that is no model is a
``ValueError`` rather than a crash.  The operators and their output tensors' names are what maps the runtime's per-op
times back to the model's modules (:mod:`.layers`): litert-torch names every tensor after the modules it came from.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.graph.onnx_proto import ValueSpec

#: The file identifier of a TFLite flatbuffer (bytes 4-8).
IDENTIFIER = b"TFL3"


@dataclass(frozen=True)
class TfliteOp:
    """One operator of the main subgraph, in execution order: its builtin name (``CONV_2D``), output and input
    tensor names (weights included)."""

    index: int
    name: str
    outputs: tuple[str, ...]
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class TfliteModel:
    """The main subgraph's inputs and outputs (``None`` for a dimension the file leaves open), the elements of its
    constant tensors (the weights, quantized or not), and its operators."""

    inputs: tuple[ValueSpec, ...]
    outputs: tuple[ValueSpec, ...]
    params: int
    ops: tuple[TfliteOp, ...]


def schema() -> Any:
    """The generated schema module; a missing runtime is one line naming the extra that installs it."""
    try:
        from ai_edge_litert import schema_py_generated
    except ImportError:
        from edgebench.backends.litert import INSTALL

        raise ValueError(f"reading a .tflite file needs the ai-edge-litert package: {INSTALL}") from None
    return schema_py_generated


def _names(enum: Any) -> dict[int, str]:
    return {value: name for name, value in vars(enum).items() if not name.startswith("_") and isinstance(value, int)}


def read_model(path: str | Path) -> TfliteModel:
    """The model in ``path``; ``ValueError`` (one line) when the file is not a TFLite model."""
    s = schema()
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            if handle.read(8)[4:8] != IDENTIFIER:
                raise ValueError(f"{path} is not a TFLite model (no {IDENTIFIER.decode()} identifier)")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:  # a large file is not read whole
                return _read(s, data)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError:
        raise
    except Exception as exc:  # a truncated or corrupt flatbuffer: struct, index or decoding errors
        raise ValueError(f"{path} is not a TFLite model ({type(exc).__name__}: {exc})") from None


def _read(s: Any, data: Any) -> TfliteModel:
    model = s.Model.GetRootAs(data, 0)
    if model.SubgraphsLength() < 1:
        raise ValueError("the file has no subgraph")
    graph = model.Subgraphs(0)
    dtypes, builtins = _names(s.TensorType), _names(s.BuiltinOperator)

    def spec(index: int) -> ValueSpec:
        tensor = graph.Tensors(index)
        shape = tensor.ShapeSignatureAsNumpy() if tensor.ShapeSignatureLength() else tensor.ShapeAsNumpy()
        dims = tuple(None if int(d) < 0 else int(d) for d in (shape if not isinstance(shape, int) else ()))
        dtype = dtypes.get(tensor.Type(), f"tflite type {tensor.Type()}").lower()
        return ValueSpec(_text(tensor.Name()), dims, dtype)

    params = 0
    for i in range(graph.TensorsLength()):
        tensor = graph.Tensors(i)
        buffer = model.Buffers(tensor.Buffer()) if 0 < tensor.Buffer() < model.BuffersLength() else None
        if buffer is not None and (buffer.DataLength() > 0 or buffer.Size() > 0):
            elements = 1
            for d in tensor.ShapeAsNumpy() if tensor.ShapeLength() else ():
                elements *= int(d)
            params += elements
    ops = []
    for i in range(graph.OperatorsLength()):
        op = graph.Operators(i)
        code = model.OperatorCodes(op.OpcodeIndex())
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        name = _text(code.CustomCode()) if code.CustomCode() else builtins.get(builtin, f"BUILTIN_{builtin}")
        outputs = tuple(_text(graph.Tensors(t).Name()) for t in _indices(op.OutputsAsNumpy()) if t >= 0)
        inputs = tuple(_text(graph.Tensors(t).Name()) for t in _indices(op.InputsAsNumpy()) if t >= 0)
        ops.append(TfliteOp(i, name, outputs, inputs))
    return TfliteModel(
        inputs=tuple(spec(int(i)) for i in _indices(graph.InputsAsNumpy())),
        outputs=tuple(spec(int(i)) for i in _indices(graph.OutputsAsNumpy())),
        params=params,
        ops=tuple(ops),
    )


def _indices(array: Any) -> list[int]:
    """A flatbuffer vector as a list (the generated code returns 0 for an absent one)."""
    return [] if isinstance(array, int) else [int(i) for i in array]


def _text(raw: bytes | str | None) -> str:
    if raw is None:
        return ""
    return raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
