"""A language model's figures from events: the held-out curve and its verdict (the docs' rule), time to perplexity,
and per context the time to first token, decode speed and KV cache."""

from __future__ import annotations

import math

import pytest

from edgebench.measure.lm import generations, held_out_curve, perplexity_verdict, time_to_target
from edgebench.records.events import Eval, Generate, Step
from edgebench.records.lm import HeldOutPoint, LMSetup, LMText
from edgebench.records.trial import Trial

UNIGRAM = 4.83
MS = 1_000_000


def point(step: int, bits: float) -> HeldOutPoint:
    nats = bits * math.log(2)
    return HeldOutPoint(step=step, elapsed_s=None, loss_nats_per_token=nats, bits_per_byte=bits,
                        perplexity=math.exp(nats), accuracy=0.1)  # fmt: skip


@pytest.mark.parametrize(
    ("start", "end", "falls", "words"),
    [
        (3.6, 3.2, True, "below the base's start and the unigram line"),
        (8.0, 5.1, False, "stays above the unigram line"),  # a random start learning byte frequencies
        (3.2, 3.3, False, "did not fall"),
    ],
)
def test_perplexity_falls_only_below_both_the_start_and_the_unigram_line(start, end, falls, words):
    verdict = perplexity_verdict([point(0, start), point(50, end)], UNIGRAM)
    assert verdict is not None and verdict.falls is falls and words in verdict.why
    assert perplexity_verdict([point(0, start)], UNIGRAM) is None  # one evaluation says nothing


def events_of_a_fine_tune() -> list:
    steps = [Step(phase="warmup" if i < 2 else "train", index=i, start_ns=i * 100 * MS, end_ns=(i * 100 + 90) * MS)
             for i in range(6)]  # fmt: skip
    evals = [
        Eval(step=0, accuracy=0.1, start_ns=0, end_ns=0, loss_nats_per_token=3.0, bits_per_byte=4.33,
             before_training=True),
        Eval(step=2, accuracy=0.2, start_ns=400 * MS, end_ns=420 * MS, loss_nats_per_token=2.5, bits_per_byte=3.6),
        Eval(step=4, accuracy=0.3, start_ns=600 * MS, end_ns=650 * MS, loss_nats_per_token=2.0, bits_per_byte=2.9),
    ]  # fmt: skip
    return [evals[0], *steps[:4], evals[1], *steps[4:], evals[2]]


def test_the_curve_counts_warm_up_steps_and_times_from_the_first_training_step():
    curve = held_out_curve(events_of_a_fine_tune())
    assert [(p.step, p.elapsed_s) for p in curve] == [(0, None), (4, 0.42), (6, 0.65)]
    assert curve[2].perplexity == pytest.approx(math.exp(2.0))


def test_time_to_perplexity_is_the_first_evaluation_at_or_below_the_target():
    text = LMText(name="t", nbytes=10, sha256="0", train_bytes=9, test_bytes=1, unigram_bits_per_byte=3.0,
                  uniform_bits_per_byte=8.0)  # fmt: skip
    setup = LMSetup(finetune="full", trainable_params=1, frozen_params=0, tokens_per_step=256, tokenizer="bytes",
                    text=text)  # fmt: skip
    trial = Trial(model="lm_1m", data="shakespeare", until_bits_per_byte="unigram")
    reached = time_to_target(trial, setup, events_of_a_fine_tune(), None)
    assert reached is not None and reached.reached and reached.target_bits_per_byte == 3.0
    assert (reached.steps, reached.tokens, reached.time_s) == (6, 6 * 256, 0.65) and reached.energy_j is None
    missed = time_to_target(trial.model_copy(update={"until_bits_per_byte": 2.0}), setup, events_of_a_fine_tune(), None)
    assert missed is not None and not missed.reached and missed.target_perplexity == 4.0


def test_each_context_s_timed_generations_give_its_ttft_decode_rate_and_kv_cache():
    def gen(context, index, ttft_ms, decode_ms, warmup=False):
        start = (context * 10 + index) * 1000 * MS
        return Generate(context=context, index=index, warmup=warmup, start_ns=start,
                        first_token_ns=start + ttft_ms * MS, end_ns=start + (ttft_ms + decode_ms) * MS,
                        new_tokens=5, kv_cache_bytes=(context + 5) * 2048)  # fmt: skip

    events = [gen(16, 0, 500, 900, warmup=True), gen(16, 0, 10, 40), gen(16, 1, 30, 40), gen(64, 0, 50, 80)]
    by_context = generations(events, None)
    assert [g.context_tokens for g in by_context] == [16, 64]
    short, long = by_context
    assert short.generations == 2 and short.ttft_ms == 20  # the median; the warm-up left out
    assert short.decode_tokens_per_s == pytest.approx(8 / 0.080) and short.decode_ms_per_token == pytest.approx(10)
    assert short.kv_cache_bytes == 21 * 2048 and short.kv_cache_bytes_per_token == 2048
    assert long.decode_tokens_per_s == pytest.approx(4 / 0.080) and long.energy_per_token_j is None


def test_a_transformer_s_layers_add_up_by_kind_each_with_the_layers_inside_it():
    from edgebench.measure.layers import LayerRow, by_kind

    def row(name, type_, fwd, bwd=0.0):
        return LayerRow(name=name, type=type_, depth=name.count("."), calls_per_step=1, forward_ms=fwd,
                        backward_ms=bwd, optimizer_ms=0, total_ms=fwd + bwd, share_pct=0)  # fmt: skip

    rows = [row("DecoderLM", "DecoderLM", 1), row("embed", "Embedding", 2), row("blocks.0", "DecoderBlock", 1),
            row("blocks.0.attn", "Attention", 3, 1), row("blocks.0.attn.q_proj", "Linear", 4, 4),
            row("blocks.0.mlp", "SwiGLU", 1), row("blocks.0.mlp.up_proj", "Linear", 5, 5),
            row("blocks.0.attn_norm", "RMSNorm", 1, 1), row("lm_head", "Linear", 2, 2)]  # fmt: skip
    kinds = {k.kind: (k.forward_ms, k.backward_ms) for k in by_kind(rows, 40.0)}
    assert kinds == {"embedding": (2, 0), "attention": (7, 5), "mlp": (6, 5), "norm": (1, 1), "rest": (4, 2)}
    assert by_kind([row("conv", "Conv2d", 1)], 1.0) is None  # not a transformer: no table
