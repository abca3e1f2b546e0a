"""A language model's trial in-process through the workflow (the real worker and sampler): a LoRA fine-tune from a
pretrained base, and an inference trial on int8 weights; each with its tokens per second, memory by category, held-out
loss and timed generations at two context lengths.  (The command itself: tests/e2e/cli/test_lm.py.)"""

from __future__ import annotations

from edgebench.workflows.trial import TrialRequest, run_trial
from edgebench.workloads.lm import LM_1M

TINY = {"model": "lm_1m", "batch_size": 2, "input_shape": (16,), "threads": 1, "idle_s": 0, "warmup": 1,
        "contexts": (8, 16), "decode_tokens": 3, "generations": 1, "infer_steps": 2}  # fmt: skip


def test_a_lora_fine_tune_from_a_pretrained_base_reports_every_language_model_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("EDGEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    settings = {**TINY, "data": "shakespeare", "finetune": "lora", "lora_rank": 4, "pretrain_steps": 4, "steps": 4,
                "eval_every": 2}  # fmt: skip
    r = run_trial(TrialRequest(settings, no_store=True)).result
    assert r.ok, r.reason
    lm = r.language_model
    assert lm is not None and lm.setup.lora_rank == 4 and lm.setup.lora_layers == 7 * 4
    assert lm.setup.pretraining is not None and lm.setup.pretraining.steps == 4
    assert lm.tokens_per_s is not None and lm.tokens_per_s > 0 and lm.setup.tokens_per_step == 32
    assert [p.step for p in lm.held_out] == [0, 3, 5] and lm.verdict is not None  # before, then warm-up + 2, + 4
    assert [g.context_tokens for g in lm.generation] == [8, 16]
    assert [g.kv_cache_bytes for g in lm.generation] == [LM_1M.shape.kv_cache_bytes(c + 3) for c in (8, 16)]
    assert all(g.ttft_ms > 0 and g.decode_tokens_per_s > 0 for g in lm.generation)
    c = r.memory.by_category
    assert c.frozen_params_bytes == 4 * LM_1M.shape.params() and c.params_bytes == c.gradients_bytes > 0
    assert c.counted_bytes + c.other_bytes == c.peak_bytes  # the categories and "other" make the peak
    assert lm.generation_memory.kv_cache_bytes == LM_1M.shape.kv_cache_bytes(16 + 3)
    assert r.energy.measurement_method == "not measured: no power sensor" and r.energy.sampling_rate_hz == 100
    assert lm.energy_per_token_j is None  # no power sensor here: never estimated into it


def test_an_inference_trial_on_int8_weights_times_forward_passes_and_generations(tmp_path):
    settings = {**TINY, "mode": "infer", "frozen_weights": "int8", "steps": 3}
    r = run_trial(TrialRequest(settings, no_store=True)).result
    assert r.ok, r.reason
    lm = r.language_model
    assert lm.setup.trainable_params == 0 and lm.setup.frozen_weights == "int8"
    assert lm.tokens_per_s is not None and lm.held_out is None and len(lm.generation) == 2
    assert r.memory.by_category.frozen_params_bytes < LM_1M.shape.params() * 4 / 2  # int8 linears
