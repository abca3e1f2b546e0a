"""A language model's figures as the terminal summary, ``show`` and the report print them: one declaration of the
rows, so each figure reads the same wherever it is shown (with its unit, and "shape only" on a published shape)."""

from __future__ import annotations

from edgebench.records.lm import Generation, LanguageModel
from edgebench.records.result import TrialResult
from edgebench.units import format_size


def setup_text(lm: LanguageModel) -> str:
    s = lm.setup
    shape = "SHAPE ONLY (published configuration, random weights); " if s.shape_only else ""
    text = f"; text {s.text.name} ({s.text.nbytes:,} bytes, {s.tokenizer})" if s.text is not None else ""
    return (
        f"{shape}{s.finetune}: {s.trainable_params:,} trainable / {s.frozen_params:,} frozen params, "
        f"{s.tokens_per_step:,} tokens per step{text}"
    )


def throughput_text(lm: LanguageModel, mode: str) -> str:
    rate = "-" if lm.tokens_per_s is None else f"{lm.tokens_per_s:,.1f} tokens/s"
    energy = (
        "no power sensor"
        if lm.energy_per_token_j is None
        else _joules(lm.energy_per_token_j, lm.energy_per_token_ci95_j)
    )
    what = "trained" if mode == "train" else "forward"
    return f"{rate} ({what}); energy per token: {energy}"


def _joules(j: float, ci: float | None) -> str:
    return f"{j * 1e3:.3f} mJ" + (f" ± {ci * 1e3:.3f} mJ (95%)" if ci is not None else "")


def held_out_text(lm: LanguageModel) -> str | None:
    points = lm.held_out or []
    if not points or lm.setup.text is None:
        return None
    a, b = points[0], points[-1]
    line = (
        f"{a.bits_per_byte:.3f} -> {b.bits_per_byte:.3f} bits/byte (perplexity {a.perplexity:.1f} -> "
        f"{b.perplexity:.1f}) over {b.step} steps, {len(points)} evaluations; unigram line "
        f"{lm.setup.text.unigram_bits_per_byte:.3f}, uniform {lm.setup.text.uniform_bits_per_byte:.3f}"
    )
    if lm.verdict is not None:
        line += "; perplexity falls" if lm.verdict.falls else "; perplexity does not fall"
    return line


def pretraining_text(lm: LanguageModel) -> str | None:
    p = lm.setup.pretraining
    if p is None:
        return None
    how = f"loaded from the cache in {p.seconds:.2f} s" if p.from_cache else f"trained in {p.seconds:.1f} s"
    loss = f", loss {p.loss_first:.3f} -> {p.loss_last:.3f}" if p.loss_first is not None and p.loss_last else ""
    text = lm.setup.text
    half = f" on the first {text.pretrain_bytes:,} bytes" if text is not None else ""
    return f"{p.steps} full steps{half} ({how}{loss}); not part of the measured fine-tune"


def time_to_target_text(lm: LanguageModel) -> str | None:
    t = lm.time_to_target
    if t is None:
        return None
    target = f"{t.target_bits_per_byte:.3f} bits/byte (perplexity {t.target_perplexity:.1f})"
    if not t.reached:
        return f"{target} not reached"
    energy = f", {t.energy_j:.2f} J" if t.energy_j is not None else ""
    return f"{target} in {t.time_s:.2f} s, {t.steps} steps, {t.tokens:,} tokens{energy} (evaluations included)"


def generation_text(g: Generation) -> str:
    decode = "-" if g.decode_tokens_per_s is None else f"{g.decode_tokens_per_s:.1f} tokens/s"
    energy = (
        "" if g.energy_per_token_j is None else f", {_joules(g.energy_per_token_j, g.energy_per_token_ci95_j)}/token"
    )
    return (
        f"context {g.context_tokens}: TTFT {g.ttft_ms:.1f} ms, decode {decode}, KV cache "
        f"{format_size(g.kv_cache_bytes)} ({format_size(g.kv_cache_bytes_per_token)}/token){energy}"
    )


def lm_rows(r: TrialResult) -> list[tuple[str, str]]:
    """``(label, text)`` rows of a language-model trial's summary (none for other models): the labels may hold Rich
    markup, the texts are plain (the table escapes them, :func:`edgebench.markup.rich_text`)."""
    lm = r.language_model
    if lm is None:
        return []
    rows = [("language model", setup_text(lm)), ("tokens/s", throughput_text(lm, r.trial.mode))]
    for label, text in (
        ("pretraining", pretraining_text(lm)),
        ("held-out loss", held_out_text(lm)),
        ("time to perplexity", time_to_target_text(lm)),
    ):
        if text is not None:
            rows.append((label, text))
    if lm.verdict is not None:
        rows.append(("perplexity verdict", lm.verdict.why))
    if lm.generation:
        rows.append(("generation (batch 1)", "\n".join(generation_text(g) for g in lm.generation)))
    if lm.generation_memory is not None:
        from edgebench.report.memory import category_text

        rows.append(("memory by category (generate)", category_text(lm.generation_memory)))
    rows += [("[yellow]language model note[/yellow]", n) for n in lm.notes or ()]
    return rows
