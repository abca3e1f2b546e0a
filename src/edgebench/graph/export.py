"""A zoo workload's PyTorch model as an ONNX file: the bridge every non-torch backend builds its model from.

The model is the torch backend's own (same definition, same ``torch.manual_seed(seed)`` before it is built), so
architecture, parameter count and weights match the torch trial by construction.  Exported with the TorchScript
exporter (``dynamo=False``): torch 2.13's default torch.export-based exporter needs the ``onnxscript`` package,
which is not a dependency of edgebench (nor installed offline here), and the TorchScript exporter names every node
after the module scope it ran in (``/stages/stages.0/stages.0.0/conv1/Conv``), which is what maps a runtime's
per-node profile back to the model's modules (:func:`edgebench.graph.scopes.module_of_node`).  It lives in the model
graph, not in a backend, because two runtimes (ONNX Runtime and MNN) build their model from it.

Two variants:

* ``training=False`` (inference): eval mode and constant folding, so batch norm is folded into the convolution
  before it (as every inference runtime does anyway); folded weights get new names (``onnx::Conv_497``).
* ``training=True`` (for MNN's ``--forTraining`` conversion): no constant folding, so batch norm stays its own node
  and every PyTorch parameter keeps its own values (initializers under their ``named_parameters()`` names, except
  that the exporter merges initializers with equal values, such as fresh batch norms' ones and zeros).  Only
  those become trainable (:attr:`ExportedModel.parameter_initializers`); batch-norm running statistics are
  buffers.  The graph is exported in eval mode (``TrainingMode.EVAL``) all the same: MNN 3.6.1's trainer crashes
  (SIGSEGV) on the converted train-mode graph (its Dropout and train-mode BatchNormalization nodes), so MNN trains
  without dropout; its trainer rebuilds batch norm to use batch statistics, as PyTorch's train mode does.

Files are cached under ``$EDGEBENCH_CACHE_DIR/onnx`` (default ``~/.cache/edgebench/onnx``), keyed by everything that
decides their bytes: workload, input, classes, batch, seed, variant, opset and the code's fingerprint
(:func:`edgebench.graph.cache.fingerprint`); a JSON sidecar carries the metadata, sealed with that key and the
``.onnx`` file's SHA-256 (:func:`edgebench.host.files.write_sealed`), so a torn, stale or replaced file is exported
again.  Imports torch and onnx: only the backends that need an export call it, inside their worker.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from edgebench.graph import cache
from edgebench.host.files import read_description, write_description

#: ONNX opset of every export: supported by onnxruntime >= 1.17 and by MNN 3.x's converter.
OPSET = 17
INPUT_NAME = "input"
OUTPUT_NAME = "output"


@dataclass(frozen=True)
class ExportedModel:
    """An exported model file and what a backend needs to know about it."""

    path: str
    model: str
    batch_size: int
    #: Per-sample input shape and classes the model was built for (the file's input is ``(batch, *input_shape)``).
    input_shape: tuple[int, ...]
    num_classes: int
    seed: int
    training: bool
    #: Trainable parameters of the PyTorch model (the torch trial's ``params``).
    params: int
    opset: int
    exporter: str
    input_name: str = INPUT_NAME
    output_name: str = OUTPUT_NAME
    #: ONNX initializer name -> PyTorch parameter name, for the initializers that are parameters (all of them in a
    #: ``training`` export; those not folded away in an inference export).  Only these may become trainable.
    parameter_initializers: dict[str, str] = field(default_factory=dict)
    #: Qualified names of the model's modules and their class names, for mapping node names back.
    modules: dict[str, str] = field(default_factory=dict)
    #: The root module's class (``LeNet``), the name layer spans give the whole model.
    root_class: str = "model"

    @property
    def input_dims(self) -> tuple[int, ...]:
        return (self.batch_size, *self.input_shape)


def resolve_input(
    model: str, input_shape: tuple[int, ...] | None, num_classes: int | None, preset: str | None
) -> tuple[tuple[int, ...], int]:
    """The per-sample input and classes as the torch backend resolves them: explicit, else the preset's, else the
    workload's defaults."""
    from edgebench.workloads import get_workload

    workload = get_workload(model)
    chosen = workload.preset(preset) if preset else None
    shape = tuple(input_shape or (chosen.input_shape if chosen else workload.input_shape))
    classes = num_classes or (chosen.num_classes if chosen else workload.num_classes)
    return shape, classes


def export_workload(
    model: str,
    *,
    batch_size: int,
    input_shape: tuple[int, ...] | None = None,
    num_classes: int | None = None,
    preset: str | None = None,
    seed: int = 0,
    training: bool = False,
    cache_dir: Path | None = None,
) -> ExportedModel:
    """The ONNX export of ``model`` at this input and batch, from the cache when an equal export exists.

    Raises ``ValueError`` (one line) for a workload whose model does not take one image-like tensor (a GAN's two
    nets, a sequence model's token ids and state): those are not exported.
    """
    from edgebench.graph.cache import cacheable, fingerprint
    from edgebench.workloads import get_workload

    workload = get_workload(model)
    shape, classes = resolve_input(workload.name, input_shape, num_classes, preset)
    key_fields = {
        "model": workload.name,
        "batch_size": batch_size,
        "input_shape": list(shape),
        "num_classes": classes,
        "seed": seed,
        "training": training,
        "opset": OPSET,
        "code": fingerprint() if cacheable(workload) else None,
    }
    directory = cache_dir or cache.cache_dir("onnx")
    key = hashlib.sha256(json.dumps(key_fields, sort_keys=True).encode()).hexdigest()[:20]
    stem = f"{workload.name}-b{batch_size}-{'x'.join(map(str, shape))}-{'train' if training else 'infer'}-{key}"
    path, meta_path = directory / f"{stem}.onnx", directory / f"{stem}.json"
    if key_fields["code"] is not None:
        cached = _cached(path, meta_path, key)
        if cached is not None:
            return cached
    module, example = build_module(workload.name, batch_size, shape, classes, seed, training)
    directory.mkdir(parents=True, exist_ok=True)
    exported = export_module(module, example, path, training=training)
    record = ExportedModel(
        path=str(path),
        model=workload.name,
        batch_size=batch_size,
        input_shape=shape,
        num_classes=classes,
        seed=seed,
        training=training,
        params=sum(p.numel() for p in module.parameters()),
        opset=OPSET,
        exporter=exported["exporter"],
        parameter_initializers=exported["parameter_initializers"],
        modules={name: type(m).__name__ for name, m in module.named_modules() if name},
        root_class=type(module).__name__,
    )
    # sealed: what it was derived from, and the file's own digest (a torn or replaced .onnx is exported again)
    write_description(path, meta_path, asdict(record), key)
    return record


def _cached(path: Path, meta_path: Path, key: str) -> ExportedModel | None:
    """The export kept at ``path`` (:func:`edgebench.host.files.read_description`); else None (export again)."""
    doc = read_description(path, meta_path, key)
    if doc is None:
        return None
    try:
        return ExportedModel(**{**doc, "input_shape": tuple(doc["input_shape"])})
    except (ValueError, TypeError, KeyError):
        return None


def build_module(
    model: str, batch_size: int, input_shape: tuple[int, ...], num_classes: int, seed: int, training: bool
) -> tuple[Any, Any]:
    """The torch trial's model (same seed, same definition) and its synthetic input batch."""
    from edgebench.workloads import get_workload

    session = get_workload(model).session(batch_size, input_shape=input_shape, num_classes=num_classes, seed=seed)
    module, inputs = getattr(session, "model", None), getattr(session, "inputs", None)
    if module is None or inputs is None or not getattr(inputs, "is_floating_point", lambda: False)():
        raise ValueError(f"{model}: its task's model does not take one input tensor, so it is not exported to ONNX")
    return module.train(training), inputs


def export_module(module: Any, example: Any, path: Path, *, training: bool = False) -> dict[str, Any]:
    """Export ``module`` at ``example``'s shape to ``path`` (atomically); returns the exporter used and the map of
    initializers that are parameters."""
    import onnx
    import torch

    tmp = path.with_suffix(".onnx.tmp")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice, tracer warnings
        torch.onnx.export(
            module,
            (example,),
            str(tmp),
            dynamo=False,
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            opset_version=OPSET,
            training=torch.onnx.TrainingMode.EVAL,  # also for MNN's training conversion: see the module's notes
            do_constant_folding=not training,
        )
    graph = onnx.load(str(tmp), load_external_data=False).graph
    parameters = {name for name, _ in module.named_parameters()}
    initializers = {init.name: init.name for init in graph.initializer if init.name in parameters}
    tmp.replace(path)
    exporter = f"torch.onnx.export(dynamo=False), torch {torch.__version__}"
    return {"exporter": exporter, "parameter_initializers": initializers}
