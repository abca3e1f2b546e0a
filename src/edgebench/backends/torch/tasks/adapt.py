"""What a language model's session does to its model before stepping: freeze, quantize the frozen weights, add LoRA,
turn on activation checkpointing; and the counts of what then trains and what does not.

Shared by the decoder's task (:mod:`.causal_lm`) and the encoder's (:mod:`.text_classification`).  The order
matters: int8 replaces the base's linear layers first, then LoRA wraps them (its adapters stay fp32), so a QLoRA-style
base is ``int8`` weights under fp32 adapters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from edgebench.records.lm import LMSetup
from edgebench.workloads.lm import LMSettings
from edgebench.zoo.int8_weights import freeze_weights, inner_tensors
from edgebench.zoo.lora import add_lora, add_peft_lora, unwrap


@dataclass(frozen=True)
class Adapted:
    """The model to step (peft's wrapper, or the model itself) and what was done to it."""

    model: nn.Module
    lora_layers: int | None
    int8_layers: int


def adapt(model: nn.Module, settings: LMSettings) -> Adapted:
    """Apply ``settings`` to ``model``: in inference every weight is frozen (and int8 where asked); a LoRA fine-tune
    freezes the base (int8 where asked) and adds adapters; a full fine-tune trains everything."""
    mode = settings.mode
    int8_layers = 0
    if mode == "infer" or settings.finetune == "lora":
        for p in model.parameters():
            p.requires_grad_(False)
        int8_layers = freeze_weights(model, settings.frozen_weights)
    lora_layers = None
    if mode == "train" and settings.finetune == "lora":
        if settings.lora_impl == "peft":
            model = add_peft_lora(model, settings.lora_targets, settings.lora_rank, settings.lora_alpha)
            lora_layers = sum(
                1 for m in model.modules() if type(m).__name__.endswith("Linear") and hasattr(m, "lora_A")
            )
        else:
            lora_layers = add_lora(model, settings.lora_targets, settings.lora_rank, settings.lora_alpha)
    if settings.checkpointing == "blocks":
        unwrap(model).checkpoint_blocks = True  # type: ignore[assignment]
    return Adapted(model, lora_layers, int8_layers)


def weight_counts(model: nn.Module) -> tuple[int, int]:
    """``(trainable, frozen)`` element counts: parameters that train; parameters that do not, and the int8 weights
    and scales of frozen layers (a torchao weight counts its inner int8 data and scales)."""
    trainable = frozen = 0
    for p in model.parameters():
        n = sum(t.numel() for t in inner_tensors(p))
        if p.requires_grad:
            trainable += n
        else:
            frozen += n
    for m in model.modules():
        if getattr(m, "memory_category", None) == "frozen_params":
            frozen += sum(b.numel() for b in m.buffers(recurse=False))
    return trainable, frozen


def trainable_parameters(model: nn.Module) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def setup_of(adapted: Adapted, settings: LMSettings, **fields: Any) -> LMSetup:
    """The record of what was done to the model (the fine-tune, LoRA where it was added, checkpointing, the frozen
    weights' type, what trains and what does not), with the task's own ``fields`` (tokens per step, tokenizer...)."""
    lora = adapted.lora_layers is not None and adapted.lora_layers > 0
    trainable, frozen = weight_counts(adapted.model)
    return LMSetup(
        finetune=settings.describe() if settings.mode == "train" else f"inference ({settings.frozen_weights})",
        lora_rank=settings.lora_rank if lora else None,
        lora_alpha=settings.lora_alpha if lora else None,
        lora_targets=list(settings.lora_targets) if lora else None,
        lora_impl=settings.lora_impl if lora else None,
        lora_layers=adapted.lora_layers,
        checkpointing=settings.checkpointing,
        frozen_weights=settings.frozen_weights,
        trainable_params=trainable,
        frozen_params=frozen,
        **fields,
    )
