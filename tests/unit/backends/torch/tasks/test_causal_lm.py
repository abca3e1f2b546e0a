"""A language model's session: held-out loss in bits per byte, a text file as data, the pretrained base cached, timed
generation's KV cache; the encoder's classification session."""

from __future__ import annotations

import math

import torch

from edgebench.data.text import UNIFORM_BITS_PER_BYTE
from edgebench.workloads import get_workload
from edgebench.workloads.lm import LMSettings


def session(model: str = "lm_1m", **settings):
    torch.set_num_threads(1)
    data = settings.pop("data", "shakespeare")
    return get_workload(model).session(2, input_shape=(16,), data=data, lm=LMSettings(**settings))


def test_held_out_loss_is_in_nats_per_token_and_bits_per_byte_and_starts_near_uniform():
    s = session()
    point = s.held_out()
    assert point["bits_per_byte"] == point["loss_nats_per_token"] / math.log(2)
    assert abs(point["bits_per_byte"] - UNIFORM_BITS_PER_BYTE) < 0.3  # random weights: about every byte alike
    assert 0 <= point["accuracy"] <= 1
    text = s.language_model.text
    assert text.name == "shakespeare" and text.nbytes == 103_427 and text.unigram_bits_per_byte < 5


def test_any_text_file_is_data(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("the quick brown fox jumps over the lazy dog. " * 40)
    s = session(data=str(path))
    assert s.language_model.text.name == "notes.txt" and s.language_model.text.nbytes == path.stat().st_size
    losses = [float(s.train_step()) for _ in range(3)]
    assert all(math.isfinite(v) for v in losses)


def test_the_pretrained_base_is_cached_by_its_configuration(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEBENCH_CACHE_DIR", str(tmp_path))
    first = session(pretrain_steps=3)
    again = session(pretrain_steps=3)
    other = session(pretrain_steps=4)
    assert not first.language_model.pretraining.from_cache and again.language_model.pretraining.from_cache
    assert not other.language_model.pretraining.from_cache
    w = [s.model.embed.weight for s in (first, again, other)]
    assert torch.equal(w[0], w[1]) and not torch.equal(w[0], w[2])
    assert first.language_model.text.pretrain_bytes == len(first.text.pretrain) > 0
    assert first.language_model.text.train_bytes + first.language_model.text.pretrain_bytes == 93_084


def test_a_generation_allocates_its_context_and_new_tokens_and_stamps_the_first_token():
    s = session(contexts=(8,), decode_tokens=4)
    timing = s.generate(8, 4)
    assert timing["start_ns"] < timing["first_token_ns"] < timing["end_ns"]
    assert timing["kv_cache_bytes"] == get_workload("lm_1m").shape.kv_cache_bytes(12) == s.kv_cache.nbytes
    assert timing["new_tokens"] == 4


def test_the_encoder_classifies_speakers_in_full_or_with_lora():
    full = session("bert_tiny", data="speakers")
    assert full.num_classes == 4 and full.data.majority_accuracy > 0.4
    assert math.isfinite(float(full.train_step())) and 0 <= full.evaluate() <= 1
    lora = session("bert_tiny", data="speakers", finetune="lora", lora_rank=2)
    trainable = sum(p.numel() for p in lora.model.parameters() if p.requires_grad)
    assert trainable == 2 * 2 * (4 * (128 + 128) + (128 + 512) + (512 + 128))  # 2 layers, 6 targets each
    assert lora.language_model.lora_layers == 12
