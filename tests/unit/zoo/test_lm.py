"""The decoder and the encoder: exact parameter counts (against the published totals and a formula), the KV cache
(its bytes, and cached decoding equal to decoding without it), tied embeddings, checkpointing's equal gradients."""

from __future__ import annotations

import pytest
import torch

from edgebench.data.text import BYTE_VOCAB as DATA_BYTE_VOCAB
from edgebench.workloads.lm import BYTE_VOCAB, DECODERS, ENCODERS, LM_1M, WORDPIECE_VOCAB, DecoderShape
from edgebench.zoo.lm import DecoderLM, EncoderClassifier, greedy

#: The published totals, by hand from the models' own pages and configs, not from edgebench's formula.
PUBLISHED = {
    "smollm2_135m": 134_515_008,
    "mobilellm_125m": 124_635_456,
    "qwen2.5_0.5b": 494_032_768,
    "llama3.2_1b": 1_235_814_400,
    "tinyllama_1.1b": 1_100_048_384,
}

SMALL = DecoderShape(BYTE_VOCAB, 32, 3, 4, 2, 48, max_seq=64)


def test_the_tokenizer_and_the_presets_agree_on_the_byte_vocabulary():
    assert BYTE_VOCAB == DATA_BYTE_VOCAB == 259


@pytest.mark.parametrize("workload", DECODERS, ids=lambda w: w.name)
def test_each_decoder_has_exactly_its_formula_s_parameters_and_a_published_shape_its_published_total(workload):
    with torch.device("meta"):
        model = workload.build_model(workload.num_classes, workload.input_shape)
    counted = sum(p.numel() for p in model.parameters())  # a tied weight is yielded once
    assert counted == workload.shape.params()
    if workload.shape_only:
        assert counted == PUBLISHED[workload.name]
        assert [r.value for r in workload.references] == [PUBLISHED[workload.name]]
        assert "shape only" in workload.description


@pytest.mark.parametrize("workload", ENCODERS, ids=lambda w: w.name)
@pytest.mark.parametrize("vocab", [BYTE_VOCAB, WORDPIECE_VOCAB])
def test_each_encoder_has_exactly_its_formula_s_parameters(workload, vocab):
    with torch.device("meta"):
        model = EncoderClassifier(workload.encoder, 2, vocab)
    assert sum(p.numel() for p in model.parameters()) == workload.encoder.params(2, vocab)


def test_tied_embeddings_share_one_tensor_and_tinyllama_s_do_not():
    tied = DecoderLM(SMALL)
    assert tied.lm_head.weight is tied.embed.weight
    from dataclasses import replace

    untied = DecoderLM(replace(SMALL, tied=False))
    assert untied.lm_head.weight is not untied.embed.weight
    assert sum(p.numel() for p in untied.parameters()) == replace(SMALL, tied=False).params()


def test_the_kv_cache_holds_the_formula_s_bytes():
    model = DecoderLM(LM_1M.shape, positions=64)
    cache = model.new_cache(batch=3, capacity=40)
    assert cache.nbytes == LM_1M.shape.kv_cache_bytes(40, batch=3) == 40 * 3 * 2 * 4 * 2 * 32 * 4
    assert LM_1M.shape.kv_cache_bytes_per_token() == 2 * 4 * 2 * 32 * 4  # 2 KiB: K and V, 4 layers, 2 KV heads


def test_cached_prefill_chunk_and_decode_reproduce_the_full_forward():
    torch.manual_seed(0)
    model = DecoderLM(SMALL).eval()
    tokens = torch.randint(0, BYTE_VOCAB, (2, 20))
    with torch.no_grad():
        full = model(tokens)
        cache = model.new_cache(2, 20)
        parts = [model(tokens[:, :12], cache, 0), model(tokens[:, 12:17], cache, 12)]
        parts += [model(tokens[:, i : i + 1], cache, i) for i in range(17, 20)]
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5)


def test_greedy_decoding_with_the_cache_equals_decoding_without_it():
    torch.manual_seed(1)
    model = DecoderLM(SMALL).eval()
    prompt = torch.randint(0, BYTE_VOCAB, (1, 9))
    with torch.no_grad():
        cached = greedy(model, prompt, 8, model.new_cache(1, 17))
        ids = prompt
        for _ in range(8):  # the whole sequence again for every token
            ids = torch.cat((ids, model(ids)[:, -1:].argmax(-1)), dim=1)
    assert torch.equal(cached, ids[:, 9:])


def test_grouped_query_attention_equals_repeating_the_kv_heads():
    torch.manual_seed(2)
    q, k, v = torch.randn(1, 4, 6, 8), torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)
    grouped = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    repeated = torch.nn.functional.scaled_dot_product_attention(
        q, k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1), is_causal=True
    )
    assert torch.allclose(grouped, repeated, atol=1e-6)


def test_activation_checkpointing_gives_the_same_gradients():
    tokens = torch.randint(0, BYTE_VOCAB, (2, 16))
    grads = []
    for checkpointing in (False, True):
        torch.manual_seed(3)
        model = DecoderLM(SMALL).train()
        model.checkpoint_blocks = checkpointing
        model(tokens).logsumexp(-1).mean().backward()
        grads.append(model.blocks[0].attn.q_proj.weight.grad.clone())
    assert torch.allclose(grads[0], grads[1], atol=1e-6)


def test_a_context_past_the_model_s_window_is_refused():
    model = DecoderLM(SMALL, positions=16)
    model.ensure_positions(64)
    assert model.rope.shape[1] == 64
    with pytest.raises(ValueError, match="context window is 64"):
        model.ensure_positions(65)
