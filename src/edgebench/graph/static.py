"""Each module's FLOPs, bytes and calls per step for a configuration that was never run on the device.

The predictor (:mod:`edgebench.predict`) needs, for a model at a batch size, the same per-layer features a
traced trial stores (:data:`edgebench.records.spans.COST_FIELDS`, in :func:`module_labels` order).  They depend
only on the graph and the tensor shapes, not on the device, so they are counted here on this host's CPU with the
same counter the tracer uses (:func:`count_layer_costs`): one step under a dispatch mode, no timing kept.

Two facts of the configuration are not FLOPs or bytes but change a layer's cost several-fold, and are known
without timing anything: which kernel the framework dispatches a convolution to (:func:`conv_kernel`: with one
thread, PyTorch runs a 1x1 stride-1 convolution at a batch under 16 on its native im2col/GEMM path, ``Slow2d``,
and every other on oneDNN, ``Mkldnn``; on this machine the native path ran 4-6x fewer FLOP/s), and the size of
every parameter tensor (the optimizer update streams a tensor too big for the caches from DRAM once per op, and
pays a dispatch per tensor).  A third is each module's input layout (:func:`rows_per_sample`): a normalisation,
pooling or per-channel kernel loops over the (sample, channel) planes of its input, and pays per plane, so the
same bytes cost more in many small planes (a 2x2 feature map of 1024 channels) than in a few big ones.
:func:`kernel_plan` gives all three for a stored trial's configuration, which its record does not hold.

Static analysis (nothing is timed, no device is asked), so it lives in the model graph, below the backends and the
predictor that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from edgebench.graph.layer_costs import count_layer_costs
from edgebench.graph.modules import module_labels
from edgebench.workloads import get_workload


@dataclass(frozen=True)
class GraphCosts:
    """A model's labels (as a layer trace names them) with their own costs per step at one batch size."""

    names: tuple[str, ...]
    types: tuple[str, ...]
    parents: tuple[int, ...]
    #: Per label, keyed by :data:`edgebench.records.spans.COST_FIELDS`.
    costs: dict[str, np.ndarray]
    #: Forward calls per step of each label (an RNN cell is called once per time step).
    calls: np.ndarray
    #: The step's costs outside every module: the loss, and in training the optimizer update.
    unattributed: dict[str, float]
    params: int
    input_shape: tuple[int, ...]
    #: Per label, the kernel its convolution is dispatched to (:func:`conv_kernel`); "" for other modules.
    kernels: tuple[str, ...] = ()
    #: Element count of every parameter tensor, in ``parameters()`` order.
    param_numels: tuple[int, ...] = ()
    #: Per label, the rows of its input per sample (:func:`rows_per_sample`; 0 for a module without one).
    rows: tuple[int, ...] = ()


def rows_per_sample(shape: tuple[int, ...]) -> int:
    """The rows (contiguous inner runs) of one sample's input of ``shape`` (without the batch dimension): its
    channels for a 2-D or higher input (``C`` of ``C x H x W``: the planes a per-channel kernel loops over), 1 for a
    vector.

    Why: a batch norm, a pooling or a depthwise kernel loops over (sample, channel) planes and vectorises within
    one; on this machine a batch norm's backward cost about 20 ns per plane on top of its bytes, so a network of
    2x2 maps of many channels (ResNet-50 at 32x32) runs its normalisation several times slower per byte than one
    of 32x32 maps of few channels (DenseNet-40).  It follows from the shapes alone.
    """
    if not shape:
        return 0
    return int(shape[0]) if len(shape) >= 2 else 1


def graph_costs(
    model: str,
    batch_size: int,
    *,
    mode: str = "train",
    preset: str | None = None,
    input_shape: tuple[int, ...] | None = None,
    num_classes: int | None = None,
    threads: int = 1,
) -> GraphCosts:
    """Count ``model``'s per-module costs for one training step (``mode="train"``) or one forward pass."""
    workload = get_workload(model)
    chosen = workload.preset(preset) if preset else None
    shape = input_shape or (chosen.input_shape if chosen else None)
    classes = num_classes or (chosen.num_classes if chosen else None)
    torch.manual_seed(0)
    task = workload.session(batch_size, input_shape=shape, num_classes=classes, device="cpu", seed=0)
    net: torch.nn.Module = task.model
    modules, names, types, parents = module_labels(net)
    calls = np.zeros(len(modules))

    def counter(label: int) -> Any:
        def hook(module: torch.nn.Module, args: Any) -> None:
            calls[label] += 1

        return hook

    handles = [m.register_forward_pre_hook(counter(i)) for i, m in enumerate(modules)]
    conv_calls, conv_handles = _conv_hooks(modules)
    inputs, input_handles = _input_hooks(modules)
    handles += conv_handles + input_handles
    try:
        if mode == "train":
            costs, unattributed = count_layer_costs(net, task.train_step)
        else:
            net.eval()
            with torch.no_grad():
                costs, unattributed = count_layer_costs(net, task.infer_step)
    finally:
        for handle in handles:
            handle.remove()
    return GraphCosts(
        names=tuple(names),
        types=tuple(types),
        parents=tuple(parents),
        costs=costs,
        calls=calls,
        unattributed=unattributed,
        params=sum(p.numel() for p in net.parameters()),
        input_shape=tuple(getattr(task, "input_shape", None) or shape or workload.input_shape),
        kernels=_kernels(len(modules), conv_calls, batch_size, threads),
        param_numels=tuple(p.numel() for p in net.parameters()),
        rows=_rows(len(modules), inputs),
    )


_CONVS = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)
_TRANSPOSED = (torch.nn.ConvTranspose1d, torch.nn.ConvTranspose2d, torch.nn.ConvTranspose3d)


@dataclass(frozen=True)
class ConvCall:
    """What the framework's kernel choice for a convolution depends on, without the tensors' values."""

    input_shape: tuple[int, ...]  # without the batch dimension
    weight_shape: tuple[int, ...]
    bias: bool
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int

    @classmethod
    def of(cls, module: torch.nn.Module, x: torch.Tensor) -> ConvCall:
        transposed = isinstance(module, _TRANSPOSED)
        dims = len(module.kernel_size)
        padding = module.padding if not isinstance(module.padding, str) else (0,) * dims
        return cls(
            input_shape=tuple(x.shape[1:]),
            weight_shape=tuple(module.weight.shape),
            bias=module.bias is not None,
            stride=tuple(module.stride),
            padding=tuple(padding),
            dilation=tuple(module.dilation),
            transposed=transposed,
            output_padding=tuple(module.output_padding) if transposed else (0,) * dims,
            groups=module.groups,
        )


def conv_kernel(call: ConvCall, batch_size: int, threads: int) -> str:
    """The kernel PyTorch dispatches the convolution ``call`` to at ``batch_size`` with ``threads`` threads (the
    name of ``torch._C._ConvBackend``: ``Mkldnn``, ``Slow2d``...); "" where the selector cannot say.

    Why asked of the framework rather than re-derived: the rule (``ConvParams::use_mkldnn``) weighs the kernel
    size, stride, batch, groups and the thread count, and changes between releases; the framework's own selector
    answers for the installed version.  Only shapes matter, so the tensors are allocated, never filled.
    """
    x = torch.empty((batch_size, *call.input_shape))
    weight = torch.empty(call.weight_shape)
    bias = torch.empty(call.weight_shape[1 if call.transposed else 0]) if call.bias else None
    before = torch.get_num_threads()
    torch.set_num_threads(max(threads, 1))
    try:
        backend = torch._C._select_conv_backend(
            x, weight, bias, list(call.stride), list(call.padding), list(call.dilation), call.transposed,
            list(call.output_padding), call.groups,
        )  # fmt: skip
    except (RuntimeError, TypeError):  # a layout the selector does not take: not known
        return ""
    finally:
        torch.set_num_threads(before)
    return _backend_name(int(backend))


def _backend_name(value: int) -> str:
    """``torch._C._ConvBackend``'s name for ``value``; the binding leaves out ``MkldnnTranspose`` (9 in the C++
    enum, between ``Mkldnn`` and ``MkldnnEmpty``), and an unnamed value keeps its number."""
    names = {int(v): k for k, v in torch._C._ConvBackend.__members__.items()}
    names.setdefault(9, "MkldnnTranspose")
    return names.get(value, f"ConvBackend{value}")


def _conv_hooks(modules: list[torch.nn.Module]) -> tuple[dict[int, ConvCall], list[Any]]:
    """Forward pre-hooks that record, per convolution label, its first call (:class:`ConvCall`)."""
    calls: dict[int, ConvCall] = {}

    def hook(label: int) -> Any:
        def pre(module: torch.nn.Module, args: Any) -> None:
            if label not in calls and args and isinstance(args[0], torch.Tensor):
                calls[label] = ConvCall.of(module, args[0])

        return pre

    handles = [
        m.register_forward_pre_hook(hook(i)) for i, m in enumerate(modules) if isinstance(m, _CONVS + _TRANSPOSED)
    ]
    return calls, handles


def _input_hooks(modules: list[torch.nn.Module]) -> tuple[dict[int, tuple[int, ...]], list[Any]]:
    """Forward pre-hooks that record, per label, the shape of its first call's input without the batch."""
    shapes: dict[int, tuple[int, ...]] = {}

    def hook(label: int) -> Any:
        def pre(module: torch.nn.Module, args: Any) -> None:
            if label not in shapes and args and isinstance(args[0], torch.Tensor):
                shapes[label] = tuple(args[0].shape[1:])

        return pre

    return shapes, [m.register_forward_pre_hook(hook(i)) for i, m in enumerate(modules)]


def _rows(n_labels: int, shapes: dict[int, tuple[int, ...]]) -> tuple[int, ...]:
    return tuple(rows_per_sample(shapes[i]) if i in shapes else 0 for i in range(n_labels))


def _kernels(n_labels: int, calls: dict[int, ConvCall], batch_size: int, threads: int) -> tuple[str, ...]:
    return tuple(conv_kernel(calls[i], batch_size, threads) if i in calls else "" for i in range(n_labels))


@dataclass(frozen=True)
class KernelPlan:
    """What a configuration's record lacks for the predictor: conv kernels and input rows per label, and
    parameter sizes."""

    names: tuple[str, ...]
    kernels: tuple[str, ...]
    param_numels: tuple[int, ...]
    rows: tuple[int, ...] = ()


def kernel_plan(
    model: str,
    batch_size: int,
    *,
    threads: int = 1,
    preset: str | None = None,
    input_shape: tuple[int, ...] | None = None,
) -> KernelPlan:
    """The conv kernels (:func:`conv_kernel`), input rows (:func:`rows_per_sample`) and parameter sizes of
    ``model`` at ``batch_size``.

    The model is built and runs one forward pass at batch 2 without gradients (a convolution's input shape past
    the batch does not depend on it), once per model and input; each batch size then only asks the selector.
    """
    names, calls, numels, rows = _conv_calls(model, preset, input_shape)
    return KernelPlan(names, _kernels(len(names), calls, batch_size, threads), numels, rows)


@lru_cache(maxsize=64)
def _conv_calls(
    model: str, preset: str | None, input_shape: tuple[int, ...] | None
) -> tuple[tuple[str, ...], dict[int, ConvCall], tuple[int, ...], tuple[int, ...]]:
    workload = get_workload(model)
    chosen = workload.preset(preset) if preset else None
    shape = input_shape or (chosen.input_shape if chosen else None)
    classes = chosen.num_classes if chosen else None
    torch.manual_seed(0)
    task = workload.session(2, input_shape=shape, num_classes=classes, device="cpu", seed=0)
    net: torch.nn.Module = task.model
    modules, names, _, _ = module_labels(net)
    calls, handles = _conv_hooks(modules)
    inputs, input_handles = _input_hooks(modules)
    try:
        with torch.no_grad():
            task.infer_step()
    finally:
        for handle in handles + input_handles:
            handle.remove()
    return tuple(names), calls, tuple(p.numel() for p in net.parameters()), _rows(len(names), inputs)
