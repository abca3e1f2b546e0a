"""A model file the user brings (``--model path/to/model.onnx``, ``.mnn``, ``.tflite`` or ``.pte``) instead of a zoo
workload.

Users of DNNTune and of mobile runtimes bring files, not PyTorch factories.  This module is framework-free, so the
checks run where the user's input enters (:mod:`edgebench.config.trial`) before any worker starts: the file
exists and is a model (an ONNX file is read by :mod:`edgebench.graph.onnx_proto`; an ``.mnn`` file is opened by MNN
in a child process, :mod:`edgebench.backends.mnn.inspect`; a ``.tflite`` file's flatbuffer is read by
:mod:`edgebench.backends.litert.model_file`; an ExecuTorch ``.pte`` program is read by
:mod:`edgebench.backends.executorch.program`), and every input it feeds has a full shape.  A dimension
the file fixes is used as written; a dimension it leaves open (``N``, ``batch``) is the batch size when it is the
first, else it comes from ``--input-shape`` (the named input's per-sample shape), so a run never guesses a shape.

The inputs are random (numpy, from the trial's seed: uniform [0, 1) floats, small non-negative integers, which are
valid class ids and token ids), because a model file brings no data; their values do not change the time of a
dense model's forward pass.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from edgebench.graph.onnx_proto import NodeSpec, NotOnnx, ValueSpec, parse_model

#: Suffix -> format; what a ``--model`` value ending so is taken as.
FORMATS = {".onnx": "onnx", ".mnn": "mnn", ".tflite": "tflite", ".pte": "pte"}
#: The backends that run each format (the first is the default).
RUNS_ON = {"onnx": ("onnxruntime", "mnn"), "mnn": ("mnn",), "tflite": ("litert",), "pte": ("executorch",)}
#: The formats as the messages name them: ``an .onnx, .mnn, .tflite or .pte file``.
_NAMED = ", ".join(FORMATS)[::-1].replace(" ,", " ro ", 1)[::-1]
#: The dtypes a random input is made for.
_INT_HIGH = 10


@dataclass(frozen=True)
class ModelFile:
    """What a model file declares, as edgebench reads it."""

    path: str
    format: str
    inputs: tuple[ValueSpec, ...]
    outputs: tuple[ValueSpec, ...]
    #: Parameters the file holds (ONNX: initializer elements); None where the format is not read (``.mnn``).
    params: int | None
    #: The ONNX graph's nodes in file order (empty for ``.mnn``): the layer labels and the partition graph.
    nodes: tuple[NodeSpec, ...] = ()


def looks_like_file(text: str) -> bool:
    """Whether a ``--model`` value names a file rather than a zoo workload or a ``module:factory``."""
    if Path(text).suffix.lower() in FORMATS:
        return True
    return ":" not in text and ("/" in text or os.sep in text)


def model_format(path: str) -> str:
    return FORMATS[Path(path).suffix.lower()]


def file_digest(path: str | Path) -> str:
    """16 hex digits of SHA-256 over the file: two trials of one path whose bytes changed are different trials."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()[:16]


def check_path(text: str) -> Path:
    """``text`` as an existing model file's absolute path, or a ``ValueError`` saying what is wrong."""
    path = Path(text).expanduser()
    if not path.exists():
        raise ValueError(f"{text}: no such file (give a zoo model of `edgebench models`, or an {_NAMED} file)")
    if not path.is_file():
        raise ValueError(f"{text} is not a file; give an {_NAMED} model file")
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{text} is not a model file edgebench runs: give an {_NAMED} file")
    return path.resolve()


def inspect(path: str | Path) -> ModelFile:
    """What the file at ``path`` (checked by :func:`check_path`) declares; ``ValueError`` when it is no model."""
    path = Path(path)
    if model_format(str(path)) == "onnx":
        try:
            graph = parse_model(path.read_bytes())
        except NotOnnx as exc:
            raise ValueError(f"{path} is not an ONNX model ({exc})") from None
        except OSError as exc:
            raise ValueError(f"{path}: cannot read it ({exc.strerror})") from None
        return ModelFile(str(path), "onnx", graph.inputs, graph.outputs, graph.params, graph.nodes)
    if model_format(str(path)) == "tflite":
        from edgebench.backends.litert.model_file import read_model

        model = read_model(path)
        return ModelFile(str(path), "tflite", model.inputs, model.outputs, model.params)
    if model_format(str(path)) == "pte":
        return _inspect_pte(path)
    return _inspect_mnn(path)


def _inspect_pte(path: Path) -> ModelFile:
    """An ExecuTorch program's ``forward``: its tensors' shapes and dtypes as the file fixes them (read without
    ExecuTorch); inputs and outputs have no names in a program, so they are ``input_0``, ``output_0``..."""
    from edgebench.backends.executorch.program import NotProgram, read

    try:
        methods = read(path)
    except NotProgram as exc:
        raise ValueError(f"{path} is not an ExecuTorch program ({exc})") from None
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({exc.strerror})") from None
    if "forward" not in methods:
        raise ValueError(f"{path} has no forward method (its methods: {', '.join(methods) or 'none'})")

    def specs(kind: str, tensors: tuple) -> tuple[ValueSpec, ...]:
        return tuple(
            ValueSpec(f"{kind}_{i}", t.dims if t else (), t.dtype if t else "not a tensor")
            for i, t in enumerate(tensors)
        )

    forward = methods["forward"]
    return ModelFile(str(path), "pte", specs("input", forward.inputs), specs("output", forward.outputs), None)


def _inspect_mnn(path: Path) -> ModelFile:
    """Open the file with MNN in a child process (MNN prints, and a file that is no model may crash it)."""
    from edgebench.backends.mnn import missing_package

    missing = missing_package()
    if missing:
        raise ValueError(f"{path}: reading an .mnn file {missing.removeprefix('the mnn backend ')}")
    proc = subprocess.run(
        [sys.executable, "-m", "edgebench.backends.mnn.inspect", str(path)], capture_output=True, text=True
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        raise ValueError(f"{path} is not an MNN model (MNN could not open it)")
    doc = json.loads(proc.stdout.strip().splitlines()[-1])

    def specs(items: list[dict[str, Any]]) -> tuple[ValueSpec, ...]:
        return tuple(ValueSpec(i["name"], tuple(i["dims"]), i["dtype"]) for i in items)

    return ModelFile(str(path), "mnn", specs(doc["inputs"]), specs(doc["outputs"]), None)


@dataclass(frozen=True)
class Feed:
    """One input the trial feeds: its full shape (batch first) and dtype."""

    name: str
    dims: tuple[int, ...]
    dtype: str


def resolve_feeds(
    model: ModelFile,
    *,
    batch_size: int | None,
    input_name: str | None,
    input_shape: tuple[int, ...] | None,
) -> tuple[list[Feed], int]:
    """The full shape of every input and the batch size they run at, or a ``ValueError`` naming what to give.

    ``batch_size`` is the user's (None: not given); ``input_shape`` is the per-sample shape of ``input_name`` (the
    only input, when there is one).
    """
    if not model.inputs:
        raise ValueError(f"{Path(model.path).name} declares no input to feed")
    names = [i.name for i in model.inputs]
    if input_name is not None and input_name not in names:
        raise ValueError(f"the file has no input {input_name!r}; its inputs: {', '.join(names)}")
    if input_shape is not None and input_name is None and len(names) > 1:
        raise ValueError(f"--input-shape applies to one input; name it with --input-name ({', '.join(names)})")
    shaped = input_name or names[0]
    fixed = {i.dims[0] for i in model.inputs if i.dims and i.dims[0] is not None}
    # Not given: the file's own fixed batch where it has one, else 1 (DNNTune's input_shape: [1, ...]).
    batch = batch_size if batch_size is not None else (next(iter(fixed)) if len(fixed) == 1 else 1)
    feeds = []
    for spec in model.inputs:
        dims = list(spec.dims)
        if model.format == "mnn" and batch_size is not None and dims:
            dims[0] = batch_size  # MNN files store the converter's shape; MNN resizes the batch at run time
        if spec.name == shaped and input_shape is not None:
            if dims and len(input_shape) != len(dims) - 1:
                raise ValueError(
                    f"input {spec.name!r} has {len(dims)} dimensions ({_shape_text(spec.dims)}); give "
                    f"--input-shape for the {len(dims) - 1} after the batch"
                )
            clash = [
                (i + 1, d, g)
                for i, (d, g) in enumerate(zip(dims[1:], input_shape, strict=True))
                if d is not None and d != g
            ]
            if clash and model.format in ("onnx", "pte"):  # MNN resizes; ONNX and ExecuTorch fix what they fix
                where, fixed_dim, given = clash[0]
                raise ValueError(
                    f"input {spec.name!r} fixes dimension {where} at {fixed_dim} ({_shape_text(spec.dims)}), not "
                    f"{given}; leave --input-shape out or match the file"
                )
            dims = [dims[0] if dims else None, *input_shape]
        if not dims:
            raise ValueError(f"input {spec.name!r} is a scalar or has no declared shape; edgebench feeds tensors")
        if dims[0] is None:
            dims[0] = batch
        elif batch_size is not None and dims[0] != batch_size:
            raise ValueError(
                f"input {spec.name!r} has a fixed batch of {dims[0]} ({_shape_text(spec.dims)}): use "
                f"--batch-size {dims[0]} (or leave it out)"
            )
        if any(d is None for d in dims[1:]):
            raise ValueError(
                f"input {spec.name!r} leaves dimensions open ({_shape_text(spec.dims)}); give them with "
                f"--input-shape (per sample, e.g. 3x224x224)" + (" and --input-name" if len(names) > 1 else "")
            )
        if spec.dtype in ("string", "unknown", "not a tensor") or spec.dtype.startswith(("onnx type", "scalar type")):
            raise ValueError(f"input {spec.name!r} is of type {spec.dtype}; edgebench feeds numeric tensors")
        feeds.append(Feed(spec.name, tuple(int(d) for d in dims if d is not None), spec.dtype))
    return feeds, int(feeds[0].dims[0])


def _shape_text(dims: tuple[int | None, ...]) -> str:
    return "x".join("?" if d is None else str(d) for d in dims) or "scalar"


def check_output(model: ModelFile, output_name: str | None) -> str | None:
    if output_name is None:
        return None
    names = [o.name for o in model.outputs]
    if output_name not in names:
        raise ValueError(f"the file has no output {output_name!r}; its outputs: {', '.join(names)}")
    return output_name


def random_inputs(feeds: list[Feed], seed: int) -> dict[str, Any]:
    """One array per input, from the trial's seed (see the module's docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    arrays: dict[str, Any] = {}
    for feed in feeds:
        if feed.dtype.startswith("float") or feed.dtype == "bfloat16":
            dtype = "float32" if feed.dtype == "bfloat16" else feed.dtype
            arrays[feed.name] = rng.random(feed.dims, dtype=np.float64).astype(dtype)
        elif feed.dtype == "bool":
            arrays[feed.name] = rng.integers(0, 2, feed.dims).astype(bool)
        else:
            arrays[feed.name] = rng.integers(0, _INT_HIGH, feed.dims).astype(feed.dtype)
    return arrays


def describe(model: ModelFile) -> dict[str, Any]:
    """The file's declared inputs and outputs, for the trial's ``env`` (what was run)."""
    return {"inputs": [asdict(i) for i in model.inputs], "outputs": [asdict(o) for o in model.outputs]}
