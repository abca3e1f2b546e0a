"""Memory by category of a language model's steps: frozen weights, trainable adapters, gradients, optimizer state,
activations, the KV cache and buffers, each what it must be (and the input batch not over-counted under
checkpointing, which reruns blocks during backward)."""

from __future__ import annotations

import pytest

from edgebench.backends.torch.session import TorchSession
from edgebench.config.trial import make_trial
from edgebench.workloads.lm import LM_1M

SMALL = {"model": "lm_1m", "batch_size": 2, "input_shape": (16,), "threads": 1, "contexts": (8,), "decode_tokens": 4}


def categorized(**settings):
    trial = make_trial(**{**SMALL, **settings})
    session = TorchSession(trial)
    if trial.mode == "infer":
        session.to_inference()
    categorizer = session.memory_categorizer()
    categorizer.ensure(session.infer_step if trial.mode == "infer" else session.train_step)
    assert categorizer.result is not None
    return session, categorizer.result


def _numel(session, trainable: bool) -> int:
    return sum(p.numel() for p in session.model.parameters() if p.requires_grad == trainable)


def test_a_full_fine_tune_trains_every_weight_with_adamw_s_two_moments():
    session, c = categorized()
    params = LM_1M.shape.params()
    assert c.params_bytes == 4 * params == c.gradients_bytes and c.frozen_params_bytes == 0
    n_tensors = sum(1 for p in session.model.parameters())
    assert c.optimizer_bytes == 2 * 4 * params + 4 * n_tensors  # exp_avg, exp_avg_sq and a step count each
    assert c.input_bytes == 2 * 17 * 8  # the int64 window of 16 tokens and its next one
    assert c.buffers_bytes == 2 * 17 * 32 * 4  # the rotary cos and sin tables (17 positions, head_dim 32)
    assert c.kv_cache_bytes == 0 and c.activations_bytes > c.input_bytes


def test_lora_freezes_the_base_and_only_the_adapters_have_gradients_and_state():
    session, c = categorized(finetune="lora", lora_rank=4)
    adapters = _numel(session, trainable=True)
    assert adapters == 4 * 4 * (2 * (128 + 128) + 2 * (128 + 64) + 3 * (128 + 384))  # r x (in + out) per target
    assert c.params_bytes == 4 * adapters == c.gradients_bytes
    assert c.frozen_params_bytes == 4 * LM_1M.shape.params()
    assert c.optimizer_bytes < 3 * c.params_bytes  # the base has no optimizer state


def test_an_int8_base_holds_a_quarter_of_the_bytes_and_torchao_s_counts_its_int8_data():
    _, fp32 = categorized(finetune="lora")
    _, int8 = categorized(finetune="lora", frozen_weights="int8")
    _, torchao = categorized(finetune="lora", frozen_weights="torchao-int8")
    embedding = 4 * 259 * 128 + 4 * 128 * 9  # fp32: the tied embedding and the norms stay
    linear_fp32 = fp32.frozen_params_bytes - embedding
    for c in (int8, torchao):
        assert linear_fp32 / 4 <= c.frozen_params_bytes - embedding < linear_fp32 / 3.5  # int8 and per-row scales
    assert int8.activations_bytes == pytest.approx(fp32.activations_bytes, rel=0.02)  # no fp32 copy kept
    assert torchao.activations_bytes > fp32.activations_bytes + linear_fp32 * 0.9  # torchao keeps one (docs say)


def test_checkpointing_keeps_fewer_activations_and_counts_the_input_once():
    _, plain = categorized()
    _, ckpt = categorized(checkpointing="blocks")
    assert ckpt.input_bytes == plain.input_bytes == 2 * 17 * 8  # recomputed blocks in backward are not the input
    assert ckpt.activations_bytes < plain.activations_bytes / 2


def test_a_generation_holds_the_kv_cache_of_its_context_and_new_tokens():
    session, _ = categorized(mode="infer")
    categorizer = session.generation_categorizer()
    categorizer.ensure(lambda: session.generate(8, 4))
    c = categorizer.result
    assert c is not None and c.mode == "generate"
    assert c.kv_cache_bytes == LM_1M.shape.kv_cache_bytes(8 + 4) == 12 * 2048
    assert c.params_bytes == 0 and c.frozen_params_bytes == 4 * LM_1M.shape.params()  # inference freezes all
    assert c.input_bytes <= 8 * 8 + 4 * 8 * 4  # the prompt and the tokens fed back, not the text behind them
