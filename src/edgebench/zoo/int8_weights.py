"""Frozen int8 weights for a language model's linear layers: a QLoRA-style frozen base, or weight-only int8 inference.

Two ways, both symmetric per output row (``w ≈ q * scale``, ``q`` in int8):

- ``int8``: edgebench's :class:`FrozenInt8Linear`.  The int8 weight and its scales are buffers; a custom autograd
  function saves only them for backward and dequantizes one layer's weight at a time for its matmul, forward and
  backward, so a LoRA fine-tune holds a quarter of the base's bytes and nothing more.  (torch's CPU int8 kernel,
  ``_weight_int8pack_mm``, ran 6-10x slower than an fp32 matmul here, so it is not used.)
- ``torchao-int8``: torchao's ``Int8WeightOnlyConfig`` (PyTorch's quantization library, the ``lm`` extra).  On a CPU
  in eager mode it dequantizes each weight per call, and in training **autograd saves that fp32 copy for backward**:
  the frozen base's memory saving is lost during a fine-tune (measured: saved activations +35 MiB on ``lm_10m``, the
  fp32 weights' size), and a LoRA step was ~40% slower.  Kept so that the field's library is measured as it is.

The tied output layer (``lm_head``, which shares the embedding's weight) stays fp32 in both: quantizing it would
give it an int8 copy of its own and untie it.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

#: Layers left in full precision: the output layer (tied to the embedding) and the encoder's classifier head.
KEEP = ("lm_head", "classifier", "pooler")


class _Int8MatMul(torch.autograd.Function):
    """``x @ dequant(q).T``, saving only ``q`` and ``scale`` for backward (nothing trains in the weight)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(q, scale)
        return x @ (q.to(x.dtype) * scale[:, None]).T

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        q, scale = ctx.saved_tensors
        return grad @ (q.to(grad.dtype) * scale[:, None]), None, None


class FrozenInt8Linear(nn.Module):
    """A linear layer whose weight is int8 per output row, frozen (buffers, not parameters)."""

    #: The memory categorizer counts these buffers as frozen weights (:mod:`edgebench.backends.torch.memory`).
    memory_category = "frozen_params"

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        w = linear.weight.detach()
        scale = w.abs().amax(dim=1).clamp(min=1e-8) / 127
        self.register_buffer("weight_int8", torch.round(w / scale[:, None]).to(torch.int8))
        self.register_buffer("scale", scale.contiguous())
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().clone(), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = _Int8MatMul.apply(x, self.weight_int8, self.scale)
        return y if self.bias is None else y + self.bias  # type: ignore[no-any-return]


def _quantizable(name: str, module: nn.Module) -> bool:
    return isinstance(module, nn.Linear) and name.rsplit(".", 1)[-1] not in KEEP


def freeze_int8(model: nn.Module) -> int:
    """Swap every linear layer but :data:`KEEP` for :class:`FrozenInt8Linear`; returns how many."""
    swaps = []
    for parent_name, parent in model.named_modules():
        for name, child in parent.named_children():
            if _quantizable(f"{parent_name}.{name}", child):
                swaps.append((parent, name, child))
    for parent, name, child in swaps:
        setattr(parent, name, FrozenInt8Linear(child))
    return len(swaps)


def torchao_int8(model: nn.Module) -> int:
    """torchao's weight-only int8 on every linear layer but :data:`KEEP` (``ImportError`` with the install line)."""
    from edgebench.zoo.lora import quiet_imports

    try:
        with quiet_imports():
            from torchao.quantization import Int8WeightOnlyConfig, quantize_
    except ImportError:
        raise ImportError("--frozen-weights torchao-int8 needs torchao: pip install 'edgebench[lm]'") from None
    count = sum(1 for name, m in model.named_modules() if _quantizable(name, m))
    with quiet_imports():
        quantize_(model, Int8WeightOnlyConfig(), filter_fn=lambda m, fqn: _quantizable(fqn, m))
    return count


def freeze_weights(model: nn.Module, how: str) -> int:
    """Freeze the model's linear weights to int8 (``int8`` or ``torchao-int8``); ``fp32`` leaves it as it is."""
    if how == "int8":
        return freeze_int8(model)
    if how == "torchao-int8":
        return torchao_int8(model)
    return 0


def inner_tensors(t: torch.Tensor) -> list[torch.Tensor]:
    """The plain tensors holding a tensor subclass's data (torchao's ``Int8Tensor``: its int8 ``qdata``, ``scale``
    and zero point), found through ``__tensor_flatten__``; ``[t]`` for a plain tensor."""
    flatten = getattr(type(t), "__tensor_flatten__", None)
    if flatten is None or type(t) in (torch.Tensor, nn.Parameter):
        return [t]
    names, _ = t.__tensor_flatten__()  # type: ignore[attr-defined]
    found: list[torch.Tensor] = []
    for name in names:
        inner = getattr(t, name)
        if isinstance(inner, torch.Tensor):
            found.extend(inner_tensors(inner))
    return found
