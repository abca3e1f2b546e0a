"""One zoo model in MNN, from the same PyTorch definition and weights: export, convert, load, check.

PyTorch -> ONNX (:mod:`edgebench.graph.export`, its ``training`` variant: no constant folding) -> MNN.
Training loads the converted graph with ``MNN.expr.load_as_dict``; constants that are PyTorch parameters (by
their ONNX initializer names) are marked trainable with ``fix_as_trainable``; ``MNN.nn.load_module(inputs,
outputs, True)`` rebuilds convolutions and batch norms as modules with trainable weights.  Two side effects of the
converter are undone or checked here:

- a convolution exported without bias (``bias=False`` before a batch norm) gets a zero bias, which the trainer
  would make trainable: such tensors match no PyTorch parameter and are fixed as constants again;
- batch-norm running statistics are module parameters in MNN but constants, so they are not counted.

Every trainable MNN tensor is then matched to a PyTorch parameter by its values (the weights are the same bytes in
both); any PyTorch parameter left unmatched, or MNN tensor that is neither, raises :class:`ArchitectureMismatch`, so
the parameter count and the layer structure agree by construction and by check.

One more trap is undone before converting: MNN 3.6.1's autograd has no gradient for some ops (``Flatten``,
``GlobalAveragePool``), and every layer before one silently stops training (LeNet trained only its linear layers,
SqueezeNet nothing); :func:`differentiable_ops` rewrites them as equal ops MNN differentiates.  What still gets no
gradient is caught by the support probe (:mod:`.support`), which checks that one step updates every tensor.

MNN trains without dropout (the export's notes say why); dropout has no parameters, and MNN's rebuilt batch norm
trains on batch statistics as PyTorch's does (its running averages use momentum 0.99 where PyTorch keeps 0.9).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.graph.export import INPUT_NAME as INPUT
from edgebench.graph.export import OUTPUT_NAME as OUTPUT


class ArchitectureMismatch(RuntimeError):
    """The MNN graph's trainable tensors are not the PyTorch model's parameters."""


def differentiable_ops(onnx_path: str | Path) -> dict[str, int]:
    """Rewrite, in place, the ONNX ops MNN 3.6.1's autograd has no gradient for into equal ones it has; returns how
    many of each were rewritten.

    ``Flatten(axis=1)`` becomes ``Reshape(x, [0, -1])``; ``GlobalAveragePool`` becomes ``ReduceMean`` over the
    spatial axes (keeping them, as the pool does).  Without this, every layer before such an op silently stops
    training: LeNet trained only its linear layers, SqueezeNet nothing.
    """
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(onnx_path))
    graph = model.graph
    counts = {"Flatten": 0, "GlobalAveragePool": 0}
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in (*graph.input, *graph.value_info, *graph.output)}
    if any(n.op_type == "GlobalAveragePool" for n in graph.node):
        model = onnx.shape_inference.infer_shapes(model)
        graph = model.graph
        ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in (*graph.input, *graph.value_info, *graph.output)}
    for index, node in enumerate(list(graph.node)):
        replacement = None
        if node.op_type == "Flatten" and next((a.i for a in node.attribute if a.name == "axis"), 1) == 1:
            shape = f"{node.output[0]}__edgebench_flat_shape"
            graph.initializer.append(numpy_helper.from_array(np.array([0, -1], dtype=np.int64), shape))
            replacement = helper.make_node("Reshape", [node.input[0], shape], list(node.output), name=node.name)
        elif node.op_type == "GlobalAveragePool" and ranks.get(node.input[0], 0) >= 3:
            axes = list(range(2, ranks[node.input[0]]))
            replacement = helper.make_node(
                "ReduceMean", list(node.input), list(node.output), name=node.name, axes=axes, keepdims=1
            )
        if replacement is not None:
            graph.node.remove(node)
            graph.node.insert(index, replacement)
            counts[node.op_type] += 1
    if any(counts.values()):
        onnx.save(model, str(onnx_path))
    return counts


def _key(values: np.ndarray) -> tuple[int, str]:
    array = np.ascontiguousarray(values, dtype=np.float32)
    return array.size, hashlib.sha1(array.tobytes()).hexdigest()


@dataclass
class TrainableGraph:
    """The MNN training module and what became trainable."""

    module: Any
    #: Trainable tensors, each a PyTorch parameter's values.
    trainable: list[Any]
    params: int
    #: Zero biases the converter added to bias-free convolutions, fixed as constants again.
    converter_biases_frozen: int


def match_parameters(mnn_values: list[np.ndarray], torch_params: dict[str, np.ndarray]) -> tuple[list[int], list[str]]:
    """Indices of ``mnn_values`` that are no PyTorch parameter, and PyTorch parameters no MNN tensor is.

    Matching is by values (size and bytes): the converter copies the weights, only reshaping them (a linear layer
    becomes a 1x1 convolution, a batch norm's scale a ``1xCx1x1`` tensor).  Equal tensors (two zero biases of the
    same size) are interchangeable for the count.  Tensors MNN keeps in a layer's own shape (a batch norm's
    ``1xCx1x1``) are matched before flat ones, so that a zero batch-norm bias is not taken for a converter-added
    zero convolution bias of the same size.
    """
    pool: dict[tuple[int, str], list[str]] = {}
    for name, values in torch_params.items():
        pool.setdefault(_key(values), []).append(name)
    extra = []
    for index in sorted(range(len(mnn_values)), key=lambda i: mnn_values[i].ndim == 1):
        values = mnn_values[index]
        names = pool.get(_key(values))
        if names:
            names.pop(0)
        else:
            extra.append(index)
    missing = [name for names in pool.values() for name in names]
    return sorted(extra), missing


def _trainable_module(mnn: Any, mnn_path: str | Path, param_inits: set[str]) -> tuple[Any, list[Any]]:
    """The converted graph as an MNN training module, the PyTorch parameters' constants made trainable; the module
    and its trainable tensors, in MNN's order (the same for every load of the same file)."""
    F, nn = mnn.expr, mnn.nn
    variables = F.load_as_dict(str(mnn_path))
    for name in param_inits & set(variables):
        if variables[name].op_type == "Const":
            variables[name].fix_as_trainable()
    module = nn.load_module([variables[INPUT]], [variables[OUTPUT]], True)
    return module, [p for p in module.parameters if p.op_type == "Trainable"]


def converter_biases(
    mnn: Any, mnn_path: str | Path, torch_params: dict[str, np.ndarray], param_inits: set[str]
) -> list[int]:
    """Check that the converted graph's trainable tensors are exactly the PyTorch parameters (by value); the indices
    of the trainable tensors that are zero biases the converter added, to be fixed as constants again.

    Runs where the PyTorch parameters are (the preparing child, :mod:`.prepare`); the worker then needs only these
    indices (:func:`load_trainable`).
    """
    _, trainable = _trainable_module(mnn, mnn_path, param_inits)
    values = [np.asarray(p.read()) for p in trainable]
    extra, missing = match_parameters(values, torch_params)
    # A bias the converter added to a bias-free convolution: zeros, one per output channel.
    added = [i for i in extra if values[i].ndim == 1 and not values[i].any()]
    unexplained = [i for i in extra if i not in added]
    if missing or unexplained:
        raise ArchitectureMismatch(
            f"MNN's graph does not train the PyTorch parameters: {len(missing)} PyTorch parameter(s) without an MNN "
            f"tensor ({', '.join(missing[:4])}{'...' if len(missing) > 4 else ''}), {len(unexplained)} MNN tensor(s) "
            "that are no PyTorch parameter"
        )
    return added


def load_trainable(mnn: Any, mnn_path: str | Path, param_inits: set[str], frozen: list[int]) -> TrainableGraph:
    """The converted graph as an MNN training module whose trainable tensors are the PyTorch parameters: those
    :func:`converter_biases` matched, with the converter's zero biases (``frozen``) fixed as constants again."""
    module, trainable = _trainable_module(mnn, mnn_path, param_inits)
    for index in frozen:
        values = np.asarray(trainable[index].read()) if index < len(trainable) else None
        if values is None or values.ndim != 1 or values.any():
            raise ArchitectureMismatch(f"MNN's trainable tensor {index} is not the converter's zero bias it was")
        trainable[index].fix_as_const()
    kept = [p for i, p in enumerate(trainable) if i not in set(frozen)]
    return TrainableGraph(module, kept, sum(int(np.prod(p.shape)) for p in kept), len(frozen))
