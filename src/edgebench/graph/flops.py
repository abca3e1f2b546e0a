"""Counting a workload's FLOPs (forward per sample and one whole training step per sample) and its parameters.

Counting runs the workload's own session on the ``meta`` device, so nothing is computed or allocated and a
VGG19 step counts in well under a second.  ``torch.utils.flop_counter.FlopCounterMode`` does the counting, with
one correction: its formula for the weight gradient of a convolution ignores ``groups`` and so overcounts a
grouped convolution's backward by the group count (96x for a depthwise 3x3 on 96 channels, 97x with the input
gradient).  On ``meta`` every composite op decomposes (an LSTM into its matmuls), which on the CPU the fused
oneDNN kernels would hide from the counter.

Conventions, as in FlopCounterMode and most papers: a multiply-add is 2 FLOPs (``macs = flops / 2``);
matrix products, convolutions and attention are counted, elementwise work (activations, normalization,
the optimizer's update) is not.  The formulas per op are shared with the per-module counter
(:mod:`.layer_costs`), so the two counts agree by construction.

Parameters are counted on the model definition built on the ``meta`` device too (no memory used).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from edgebench.workloads.spec import Workload


@dataclass(frozen=True)
class FlopCount:
    """FLOPs per sample of one forward pass (inference) and of one training step (forward + backward)."""

    forward_flops: int
    train_flops: int

    @property
    def forward_macs(self) -> int:
        return self.forward_flops // 2


def mm_flops(a_shape: Sequence[int], b_shape: Sequence[int]) -> int:
    """``[m, k] @ [k, n]``: 2mkn."""
    m, k = a_shape[-2], a_shape[-1]
    return 2 * int(m) * int(k) * int(b_shape[-1])


def bmm_flops(a_shape: Sequence[int], b_shape: Sequence[int]) -> int:
    """``[b, m, k] @ [b, k, n]``: 2bmkn."""
    return int(a_shape[0]) * mm_flops(a_shape[1:], b_shape[1:])


def conv_flops(out_shape: Sequence[int], in_shape: Sequence[int], weight_shape: Sequence[int], transposed: bool) -> int:
    """Forward FLOPs of a (grouped, dilated, strided) convolution.

    Each output position of a normal convolution takes ``C_in / groups * prod(kernel)`` multiply-adds per output
    channel, which is the weight's element count divided by ``C_out``; summed over the batch, the output channels
    and positions this is ``2 * N * prod(out_spatial) * weight.numel()``, so groups are honoured by construction.
    A transposed convolution is the gradient of a normal one, so its count runs over the *input* positions.
    """
    spatial = in_shape[2:] if transposed else out_shape[2:]
    return 2 * int(out_shape[0]) * prod(int(s) for s in spatial) * prod(int(s) for s in weight_shape)


def conv_backward_flops(
    grad_out_shape: Sequence[int],
    in_shape: Sequence[int],
    weight_shape: Sequence[int],
    transposed: bool,
    output_mask: Sequence[bool],
) -> int:
    """grad-input and grad-weight each cost one forward convolution (when asked for); grad-bias is not counted."""
    forward = conv_flops(grad_out_shape, in_shape, weight_shape, transposed)
    return forward * (int(bool(output_mask[0])) + int(bool(output_mask[1])))


def sdpa_flops(q_shape: Sequence[int], k_shape: Sequence[int], v_shape: Sequence[int]) -> int:
    """Scaled dot-product attention forward: ``Q K^T`` and ``P V``, ``[b, h, s, d]`` layout."""
    b, h, s_q, d = (int(x) for x in q_shape)
    s_k, d_v = int(k_shape[-2]), int(v_shape[-1])
    return 2 * b * h * s_q * s_k * d + 2 * b * h * s_q * s_k * d_v


def rnn_layer_flops(in_shape: Sequence[int], w_ih_shape: Sequence[int], w_hh_shape: Sequence[int]) -> int:
    """One recurrent layer (one direction) over a whole sequence: at each of the ``T x N`` positions, the input
    projection ``W_ih x`` and the recurrent one ``W_hh h`` (all gates at once: ``W`` is ``[gates * H, .]``).

    ``2 * T * N * (W_ih.numel() + W_hh.numel())``, the same as the matmuls an LSTM decomposes into (on ``meta``) and
    the work the fused oneDNN LSTM kernel (``mkldnn_rnn_layer``) does on the CPU.
    """
    positions = prod(int(s) for s in in_shape[:-1])
    return 2 * positions * (prod(int(s) for s in w_ih_shape) + prod(int(s) for s in w_hh_shape))


def _flop_counter_conv_backward(
    grad_out_shape: list[int], x_shape: list[int], w_shape: list[int], _bias: Any, _stride: Any, _padding: Any,
    _dilation: Any, transposed: bool, _output_padding: Any, _groups: int, output_mask: list[bool], *_: Any, **__: Any,
) -> int:  # fmt: skip
    """:func:`conv_backward_flops` with the argument list FlopCounterMode passes for ``convolution_backward``."""
    return conv_backward_flops(grad_out_shape, x_shape, w_shape, transposed, output_mask)


def counted_flops(fn: Callable[[], object]) -> int:
    """FLOPs executed by ``fn()`` (run it on meta tensors to count without computing)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    mapping = {torch.ops.aten.convolution_backward: _flop_counter_conv_backward}
    with FlopCounterMode(display=False, custom_mapping=mapping) as c:
        fn()
    return int(c.get_total_flops())


def count_flops(
    workload: Workload,
    *,
    input_shape: tuple[int, ...] | None = None,
    num_classes: int | None = None,
    batch_size: int = 2,
) -> FlopCount:
    """Per-sample FLOPs of ``workload`` at an input, counted on its real training step on the meta device.

    A batch of 2 (not 1) keeps batch-norm and batch-dependent code paths on their training branch.
    """
    session = workload.session(batch_size, input_shape=input_shape, num_classes=num_classes, device="meta")
    session.model.eval()
    forward = counted_flops(session.infer_step)
    session.model.train()
    train = counted_flops(session.train_step)
    return FlopCount(forward_flops=forward // batch_size, train_flops=train // batch_size)


def count_params(
    workload: Workload, num_classes: int, input_shape: tuple[int, ...], excludes: tuple[str, ...] = ()
) -> int:
    """Parameters of ``workload``'s model, leaving out names that start with one of ``excludes``."""
    import torch

    with torch.device("meta"):
        model = workload.build_model(num_classes, input_shape)
    if isinstance(model, tuple):  # a user's factory that returns (module, loss_fn)
        model = model[0]
    return sum(p.numel() for n, p in model.named_parameters() if not (excludes and n.startswith(excludes)))
