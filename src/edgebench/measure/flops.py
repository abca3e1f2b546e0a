"""Counting a workload's FLOPs: forward per sample and one whole training step per sample.

Counting runs the workload's own session on the ``meta`` device, so nothing is computed or allocated and a
VGG19 step counts in well under a second.  ``torch.utils.flop_counter.FlopCounterMode`` does the counting, with
one correction: its formula for the weight gradient of a convolution ignores ``groups`` and so overcounts a
grouped convolution's backward by the group count (96x for a depthwise 3x3 on 96 channels, 97x with the input
gradient).  On ``meta`` every composite op decomposes (an LSTM into its matmuls), which on the CPU the fused
oneDNN kernels would hide from the counter.

Conventions, as in FlopCounterMode and most papers: a multiply-add is 2 FLOPs (``macs = flops / 2``);
matrix products, convolutions and attention are counted, elementwise work (activations, normalization,
the optimizer's update) is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from edgebench.models.workload import Workload


@dataclass(frozen=True)
class FlopCount:
    """FLOPs per sample of one forward pass (inference) and of one training step (forward + backward)."""

    forward_flops: int
    train_flops: int

    @property
    def forward_macs(self) -> int:
        return self.forward_flops // 2


def _conv_flops(x_shape: list[int], w_shape: list[int], out_shape: list[int], transposed: bool) -> int:
    """2 * MACs of a convolution; ``w_shape[1]`` is already in_channels / groups."""
    spatial = (x_shape if transposed else out_shape)[2:]
    return 2 * x_shape[0] * prod(spatial) * prod(w_shape)


def conv_backward_flops(
    grad_out_shape: list[int],
    x_shape: list[int],
    w_shape: list[int],
    _bias: Any,
    _stride: Any,
    _padding: Any,
    _dilation: Any,
    transposed: bool,
    _output_padding: Any,
    groups: int,
    output_mask: list[bool],
    out_shape: Any = None,
    **kwargs: Any,
) -> int:
    """Input gradient + weight gradient of a (possibly grouped) convolution.

    Each costs what the forward costs: every weight meets every output position it touched once more.
    """
    forward = _conv_flops(x_shape, w_shape, grad_out_shape, transposed)
    return forward * int(bool(output_mask[0])) + forward * int(bool(output_mask[1]))


def counted_flops(fn: Callable[[], object]) -> int:
    """FLOPs executed by ``fn()`` (run it on meta tensors to count without computing)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False, custom_mapping={torch.ops.aten.convolution_backward: conv_backward_flops}) as c:
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
