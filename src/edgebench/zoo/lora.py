"""LoRA (Hu et al. 2021): the base model frozen, a trainable low-rank update ``(alpha / r) * B A`` beside each target
linear layer.  Two implementations, with the same initialization and the same output (``tests/unit/zoo/test_lora.py``):

- edgebench's own :class:`LoRALinear` (the default): 30 lines, nothing to install and nothing imported, so the
  worker's ``runtime`` memory category stays the framework's alone;
- Hugging Face ``peft``, the field's library (``--lora-impl peft``, the ``lm`` extra): ``get_peft_model`` on our
  plain module, target names matched as suffixes.  It imports transformers, accelerate and huggingface_hub (about
  2,500 modules and +184 MB resident on this machine, more than the whole training state of ``lm_10m``), which a
  phone or a board pays too; it is imported before the runtime reading, so that cost shows as ``runtime``.

Target names are HF Llama's (``q_proj`` ... ``down_proj``), the ones peft's ``target_modules`` take.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import os
from collections.abc import Iterator

import torch
from torch import nn


class LoRALinear(nn.Module):
    """``y = base(x) + (alpha / r) * B(A(x))``: ``base`` frozen, A kaiming-uniform, B zero (peft's defaults), so the
    adapted model starts as the base."""

    def __init__(self, base: nn.Module, rank: int, alpha: float) -> None:
        super().__init__()
        self.base, self.scale = base, alpha / rank
        for p in base.parameters():
            p.requires_grad_(False)
        in_features, out_features = base.in_features, base.out_features
        device = next((t.device for t in (*base.parameters(), *base.buffers())), None)
        self.lora_A = nn.Parameter(torch.empty(rank, in_features, device=device))
        self.lora_B = nn.Parameter(torch.zeros(out_features, rank, device=device))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.in_features, self.out_features = in_features, out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.lora_A.T @ self.lora_B.T) * self.scale  # type: ignore[no-any-return]


def _targets_in(model: nn.Module, targets: tuple[str, ...]) -> list[tuple[nn.Module, str]]:
    """``(parent, child name)`` of every linear-like child whose name is a target."""
    found = []
    for module in model.modules():
        for name, child in module.named_children():
            if name in targets and hasattr(child, "in_features") and not isinstance(child, LoRALinear):
                found.append((module, name))
    return found


def add_lora(model: nn.Module, targets: tuple[str, ...], rank: int, alpha: float) -> int:
    """Freeze ``model`` and wrap each target linear layer in :class:`LoRALinear`; returns how many were wrapped
    (``ValueError`` when none matched, naming the targets)."""
    for p in model.parameters():
        p.requires_grad_(False)
    found = _targets_in(model, targets)
    if not found:
        raise ValueError(f"no linear layer of the model is named {', '.join(targets)}")
    for parent, name in found:
        setattr(parent, name, LoRALinear(getattr(parent, name), rank, alpha))
    return len(found)


@contextlib.contextmanager
def quiet_imports() -> Iterator[None]:
    """Import a chatty library without a word on stdout (``--json`` stays one object) and without its warnings
    and log lines on stderr: peft, transformers and torchao print on import (torchao: two lines about CUDA-only
    extensions it cannot load on a CPU build), and huggingface_hub is kept offline (peft wraps a module here and
    never needs the hub; none of them may phone home from a measured worker)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    levels = {name: logging.getLogger(name).level for name in ("torchao", "transformers", "peft", "torch._dynamo")}
    for name in levels:
        logging.getLogger(name).setLevel(logging.ERROR)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), _stderr_to_null():
            yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


@contextlib.contextmanager
def _stderr_to_null() -> Iterator[None]:
    """File descriptor 2 to /dev/null (C extensions write there directly, past ``sys.stderr``)."""
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def import_peft() -> object:
    """peft, imported quietly; ``ImportError`` with the install line when it is missing."""
    try:
        with quiet_imports():
            import peft
    except ImportError:
        raise ImportError("--lora-impl peft needs peft: pip install 'edgebench[lm]'") from None
    return peft


def add_peft_lora(model: nn.Module, targets: tuple[str, ...], rank: int, alpha: float) -> nn.Module:
    """``model`` wrapped by peft's LoRA (a ``PeftModel`` that forwards every argument to ``model``)."""
    peft = import_peft()
    config = peft.LoraConfig(  # type: ignore[attr-defined]
        r=rank, lora_alpha=alpha, lora_dropout=0.0, target_modules=list(targets), bias="none"
    )
    with quiet_imports():
        wrapped: nn.Module = peft.get_peft_model(model, config)  # type: ignore[attr-defined]
    return wrapped


def unwrap(model: nn.Module) -> nn.Module:
    """The model inside peft's wrappers (``PeftModel.base_model.model``), or ``model`` itself."""
    inner = getattr(getattr(model, "base_model", None), "model", None)
    return inner if isinstance(inner, nn.Module) else model
