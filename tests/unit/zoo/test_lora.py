"""LoRA leaves the base frozen and starts as the base; edgebench's LoRA computes what peft's does; the frozen int8
weights keep only int8 for backward and give the right gradient; torchao and peft import without a word on stdout."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from edgebench.workloads.lm import BYTE_VOCAB, LORA_TARGETS, DecoderShape
from edgebench.zoo.int8_weights import FrozenInt8Linear, freeze_int8, inner_tensors, torchao_int8
from edgebench.zoo.lm import DecoderLM
from edgebench.zoo.lora import LoRALinear, add_lora, add_peft_lora, unwrap

SMALL = DecoderShape(BYTE_VOCAB, 32, 2, 4, 2, 48, max_seq=64)


def _model(seed: int = 0) -> DecoderLM:
    torch.manual_seed(seed)
    return DecoderLM(SMALL)


def test_lora_freezes_the_base_trains_only_the_adapters_and_starts_as_the_base():
    model = _model()
    tokens = torch.randint(0, BYTE_VOCAB, (2, 12))
    before = model(tokens).detach()
    base = {name: p.detach().clone() for name, p in model.named_parameters()}
    wrapped = add_lora(model, LORA_TARGETS, rank=4, alpha=8)
    assert wrapped == 7 * SMALL.layers
    assert torch.allclose(model(tokens), before)  # B = 0: the adapted model starts as the base
    trainable = [p for p in model.parameters() if p.requires_grad]
    per_block = 4 * (32 + 32) + 2 * 4 * (32 + 16) + 4 * (32 + 32) + 2 * 4 * (32 + 48) + 4 * (48 + 32)
    assert sum(p.numel() for p in trainable) == SMALL.layers * per_block
    optimizer = torch.optim.AdamW(trainable, lr=1e-2)
    for _ in range(3):
        optimizer.zero_grad()
        model(tokens).logsumexp(-1).mean().backward()
        optimizer.step()
    after = {name.replace(".base", ""): p for name, p in model.named_parameters() if "lora_" not in name}
    assert all(torch.equal(after[name], value) for name, value in base.items())
    assert not torch.allclose(model(tokens), before)  # the adapters did train


def test_edgebench_s_lora_computes_what_peft_s_does():
    ours, theirs = _model(), _model()
    add_lora(ours, ("q_proj", "v_proj"), rank=4, alpha=8)
    peft_model = add_peft_lora(theirs, ("q_proj", "v_proj"), rank=4, alpha=8)
    others = dict(unwrap(peft_model).named_modules())
    for name, mine in ours.named_modules():
        if isinstance(mine, LoRALinear):
            with torch.no_grad():
                mine.lora_A.normal_()
                mine.lora_B.normal_()
            others[name].lora_A["default"].weight.data.copy_(mine.lora_A)
            others[name].lora_B["default"].weight.data.copy_(mine.lora_B)
    tokens = torch.randint(0, BYTE_VOCAB, (2, 12))
    assert torch.allclose(ours(tokens), peft_model(tokens), atol=1e-5)
    assert sum(p.numel() for p in peft_model.parameters() if p.requires_grad) == sum(
        p.numel() for p in ours.parameters() if p.requires_grad
    )


def test_frozen_int8_keeps_only_int8_for_backward_and_gives_the_input_s_gradient():
    torch.manual_seed(4)
    linear = nn.Linear(64, 48, bias=True)
    frozen = FrozenInt8Linear(linear)
    assert frozen.weight_int8.dtype == torch.int8 and not list(p for p in frozen.parameters() if p.requires_grad)
    x = torch.randn(5, 64, requires_grad=True)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        y = frozen(x)
    # the int8 weight and its scales, never a dequantized fp32 copy of the weight (nor x: nothing trains here)
    assert sorted((str(t.dtype), t.numel()) for t in saved) == [("torch.float32", 48), ("torch.int8", 48 * 64)]
    assert (y - linear(x)).abs().max() < 0.05 * linear(x).abs().max()
    grad = torch.randn_like(y)
    y.backward(grad)
    dequantized = frozen.weight_int8.float() * frozen.scale[:, None]
    assert torch.allclose(x.grad, grad @ dequantized, atol=1e-5)


def test_freeze_int8_keeps_the_tied_output_layer_in_full_precision():
    model = _model()
    assert freeze_int8(model) == 7 * SMALL.layers
    assert model.lm_head.weight is model.embed.weight


def test_torchao_int8_imports_quietly_and_its_weights_count_their_int8_data(capfd):
    model = _model()
    assert torchao_int8(model) == 7 * SMALL.layers
    out, _ = capfd.readouterr()
    assert out == ""
    weight = model.blocks[0].mlp.up_proj.weight
    inner = inner_tensors(weight)
    assert any(t.dtype == torch.int8 and t.numel() == weight.numel() for t in inner)
    assert sum(t.numel() * t.element_size() for t in inner) < weight.numel() * 2  # not the fp32 it reports


def test_lora_on_a_model_without_the_targets_is_refused():
    with pytest.raises(ValueError, match="no linear layer"):
        add_lora(nn.Sequential(nn.Linear(2, 2)), ("q_proj",), 2, 4)


def test_peft_s_import_prints_nothing(capfd):
    add_peft_lora(copy.deepcopy(_model()), ("q_proj",), 2, 4)
    assert capfd.readouterr().out == ""
