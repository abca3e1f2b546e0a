"""FLOPs and bytes of every module's own work, forward and backward, counted once at the trial's batch size.

Counted by running one real training step under a ``TorchDispatchMode`` that sees every aten op with its
tensors.  An op belongs, in forward, to the innermost module whose ``forward`` is running and, in backward, to the
module that created the autograd node being executed (``torch._C._current_autograd_node()``; nodes are matched
to modules by walking the graph back from each module's outputs, :func:`edgebench.graph.modules.claim_nodes`, as
the layer tracer does).  Ops outside every
module (the loss, the optimizer, gradient accumulation) are counted as unattributed.

What is counted:

- FLOPs: 2 per multiply-add of the matrix-multiply-like ops (``mm``, ``addmm``, ``bmm``, ``baddbmm``,
  ``convolution`` and ``convolution_backward``, CPU flash attention, the CPU's fused LSTM layer
  ``mkldnn_rnn_layer`` and its backward), which carry nearly all of a network's
  arithmetic; element-wise ops, normalisation and pooling count 0 FLOPs here (and bytes below).  Convolutions are
  counted from the weight's element count, so groups are honoured in both directions: a depthwise 3x3 layer
  costs ``2 * N * H_out * W_out * C * 9`` forward and the same again for each of grad-input and grad-weight.
  (``torch.utils.flop_counter.FlopCounterMode`` overcounts the backward of grouped convolutions by about the
  group count.)
- Bytes: for every op that is not a view, the bytes of its tensor inputs plus its tensor outputs, i.e. the
  traffic if each op read its operands and wrote its results once with nothing kept in cache.  An estimate:
  caches make real DRAM traffic lower for small tensors, and tiled GEMMs re-read operands that do not fit.

Why in the model graph and not with the tracer: the counts depend on the graph and the tensor shapes alone, never on
the device or a clock.  The torch backend's trace recorder (:mod:`edgebench.backends.torch.tracing.record`) runs this
counter once on a traced trial's first warm-up step and stores its rows beside the spans it times; :mod:`.static`
runs it for a configuration never run.  The timing itself (layer and op spans) stays in the backend's tracing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from edgebench.graph.flops import (
    bmm_flops,
    conv_backward_flops,
    conv_flops,
    mm_flops,
    rnn_layer_flops,
    sdpa_flops,
)
from edgebench.graph.modules import claim_nodes, input_floor, module_labels

aten = torch.ops.aten
_NO_TRAFFIC = {
    aten.empty.memory_format,
    aten.empty_like.default,
    aten.empty_strided.default,
    aten.new_empty.default,
    aten.new_empty_strided.default,
}


def _numel(shape: Sequence[int]) -> int:
    return math.prod(int(s) for s in shape)


def op_flops(func: Any, args: tuple[Any, ...], out: Any) -> int:
    """FLOPs of one aten op call (0 for ops this counter does not count)."""
    if func in (aten.mm.default, aten.mm.out):
        return mm_flops(args[0].shape, args[1].shape)
    if func in (aten.addmm.default, aten.addmm.out, aten._addmm_activation.default):
        return mm_flops(args[1].shape, args[2].shape)
    if func in (aten.bmm.default, aten.bmm.out):
        return bmm_flops(args[0].shape, args[1].shape)
    if func in (aten.baddbmm.default, aten.baddbmm.out):
        return bmm_flops(args[1].shape, args[2].shape)
    if func in (aten.convolution.default, aten._convolution.default):
        return conv_flops(out.shape, args[0].shape, args[1].shape, bool(args[6]))
    if func is aten.convolution_backward.default:
        return conv_backward_flops(args[0].shape, args[1].shape, args[2].shape, bool(args[7]), args[10])
    if func is aten.mkldnn_rnn_layer.default:  # the CPU's fused LSTM layer: its matmuls never reach dispatch
        return rnn_layer_flops(args[0].shape, args[1].shape, args[2].shape)
    if func is aten.mkldnn_rnn_layer_backward.default:  # grad-input, grad-hidden and both grad-weights
        return 2 * rnn_layer_flops(args[0].shape, args[1].shape, args[2].shape)
    if func is aten._scaled_dot_product_flash_attention_for_cpu.default:
        return sdpa_flops(args[0].shape, args[1].shape, args[2].shape)
    if func is aten._scaled_dot_product_flash_attention_for_cpu_backward.default:
        q, k, v = args[1], args[2], args[3]
        return 2 * sdpa_flops(q.shape, k.shape, v.shape)  # dQ, dK, dV, dP: twice the forward's matmuls
    return 0


def op_bytes(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> int:
    """Bytes the op reads (tensor inputs) and writes (tensor outputs); views and allocations move none."""
    if getattr(func, "is_view", False) or func in _NO_TRAFFIC:
        return 0
    tensors = [t for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)]
    tensors += [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
    return sum(t.numel() * t.element_size() for t in tensors)


class _Counter(TorchDispatchMode):
    def __init__(self, n_labels: int, forward_label: Callable[[], int], node_owner: dict[Any, int]) -> None:
        super().__init__()
        # rows: forward flops, backward flops, forward bytes, backward bytes; the last column is "no module"
        self.totals = np.zeros((4, n_labels + 1), dtype=np.float64)
        self._forward_label = forward_label
        self._node_owner = node_owner

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        node = torch._C._current_autograd_node()
        if node is None:
            label, backward = self._forward_label(), 0
        else:
            label, backward = self._node_owner.get(node, -1), 1
        self.totals[backward, label] += op_flops(func, args, out)
        self.totals[2 + backward, label] += op_bytes(func, args, kwargs, out)
        return out


def count_layer_costs(model: nn.Module, step: Callable[[], Any]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Run ``step`` (one forward and backward of ``model``) once and count each module's own FLOPs and bytes.

    Returns per-label arrays in :func:`edgebench.graph.modules.module_labels` order, keyed by
    :data:`edgebench.records.spans.COST_FIELDS`, and the unattributed totals (loss, optimizer, accumulation).
    """
    modules, _, _, _ = module_labels(model)
    stack: list[int] = []
    floors: list[int] = []
    owner: dict[Any, int] = {}
    claims: dict[Any, list[Any]] = {}
    last_seq = [-1]

    def pre(label: int) -> Callable[..., None]:
        def hook(module: nn.Module, args: tuple[Any, ...]) -> None:
            stack.append(label)
            floors.append(input_floor(args, last_seq[0]))

        return hook

    def post(label: int) -> Callable[..., None]:
        def own(fn: Any, is_exit: bool) -> None:
            owner[fn] = label

        def hook(module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
            stack.pop()
            # The nodes this call created that no module below it claimed (the layer tracer's rule).
            last_seq[0] = claim_nodes(output, floors.pop(), -1, claims, own)

        return hook

    handles = []
    for label, module in enumerate(modules):
        handles.append(module.register_forward_pre_hook(pre(label)))
        handles.append(module.register_forward_hook(post(label)))
    counter = _Counter(len(modules), lambda: stack[-1] if stack else -1, owner)
    try:
        with counter:
            step()
    finally:
        for handle in handles:
            handle.remove()
        owner.clear()
        claims.clear()
    totals = counter.totals
    costs = {
        "forward_flops": totals[0, :-1].copy(),
        "backward_flops": totals[1, :-1].copy(),
        "forward_bytes": totals[2, :-1].copy(),
        "backward_bytes": totals[3, :-1].copy(),
    }
    unattributed = {
        "forward_flops": float(totals[0, -1]),
        "backward_flops": float(totals[1, -1]),
        "forward_bytes": float(totals[2, -1]),
        "backward_bytes": float(totals[3, -1]),
    }
    return costs, unattributed
