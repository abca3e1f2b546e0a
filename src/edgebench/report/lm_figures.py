"""A language-model trial's own figures, as plain data like every view of :mod:`edgebench.report.figures`: time to
first token and decode speed against context length, the KV cache against context length, and the loss over steps
(training loss and held-out bits per byte, with the unigram and uniform lines)."""

from __future__ import annotations

import math

from edgebench.records.events import Step
from edgebench.report.figures import Figure, Missing, Trace, View, _label
from edgebench.store.trials import StoredTrial
from edgebench.units import MIB

_SHAPE_ONLY = " (shape only: random weights)"


def _title(stored: StoredTrial, what: str) -> str:
    r = stored.result
    shape = _SHAPE_ONLY if r.language_model is not None and r.language_model.setup.shape_only else ""
    return f"{what}: {_label(r)}{shape}"


def generation_by_context(stored: StoredTrial) -> View:
    """Time to first token (ms) and decode tokens/s against the context length (batch 1, greedy, KV cache)."""
    r = stored.result
    key, title = f"lm-context-{r.trial_id}", _title(stored, "Time to first token and decode speed against context")
    runs = r.language_model.generation if r.language_model is not None else None
    if not runs:
        return Missing(key, title, "no generation was timed (--generations 0, or --contexts none)")
    x = [float(g.context_tokens) for g in runs]
    traces = (
        Trace("time to first token (ms)", x, [g.ttft_ms for g in runs]),
        Trace("decode (tokens/s)", x, [g.decode_tokens_per_s or math.nan for g in runs], axis="y2"),
    )
    notes = (f"median of {runs[0].generations} timed generations per context, {runs[0].new_tokens} tokens each, "
             "after one untimed; batch 1, greedy, KV cache",)  # fmt: skip
    return Figure(key, title, "context (tokens)", "time to first token (ms)", traces, y2_label="decode (tokens/s)",
                  notes=notes, x_log=True)  # fmt: skip


def kv_cache_by_context(stored: StoredTrial) -> View:
    """The KV cache's bytes as the context grows (measured on its buffers), and the generation's peak memory."""
    r = stored.result
    key, title = f"lm-kv-{r.trial_id}", _title(stored, "KV cache against context")
    lm = r.language_model
    runs = lm.generation if lm is not None else None
    if not runs or lm is None:
        return Missing(key, title, "no generation was timed (--generations 0, or --contexts none)")
    x = [float(g.context_tokens) for g in runs]
    traces = [Trace("KV cache (MiB)", x, [g.kv_cache_bytes / MIB for g in runs])]
    notes = [
        f"{runs[0].kv_cache_bytes_per_token} bytes per token (context + {runs[0].new_tokens} new), allocated whole"
    ]
    memory = lm.generation_memory
    if memory is not None and memory.peak_bytes is not None:
        notes.append(f"the generation phase's peak: {memory.peak_bytes / MIB:.1f} MiB (resident, runtime included)")
    return Figure(key, title, "context (tokens)", "MiB", tuple(traces), notes=tuple(notes), x_log=True)


def loss_curve(stored: StoredTrial) -> View:
    """Training loss per step (bits per token) and held-out bits per byte over training steps, against the unigram
    and uniform lines; the verdict in the notes."""
    r = stored.result
    key, title = f"lm-loss-{r.trial_id}", _title(stored, "Loss over steps")
    lm = r.language_model
    steps = [e for e in stored.events if isinstance(e, Step) and e.phase in ("warmup", "train") and e.loss is not None]
    if lm is None or (not steps and not lm.held_out):
        return Missing(key, title, "no training step recorded a loss (an inference trial trains nothing)")
    traces = []
    if steps:
        traces.append(Trace("training loss (bits/token)", [float(i + 1) for i in range(len(steps))],
                            [s.loss / math.log(2) for s in steps]))  # type: ignore[operator]  # fmt: skip
    hlines: tuple[tuple[float, str], ...] = ()
    notes: list[str] = []
    if lm.held_out:
        traces.append(Trace("held-out (bits/byte)", [float(p.step) for p in lm.held_out],
                            [p.bits_per_byte for p in lm.held_out], kind="markers"))  # fmt: skip
    if lm.setup.text is not None:
        text = lm.setup.text
        hlines = ((text.unigram_bits_per_byte, "unigram line"), (text.uniform_bits_per_byte, "uniform"))
    if lm.verdict is not None:
        notes.append(lm.verdict.why)
    if lm.setup.pretraining is not None:
        notes.append(f"the base was pretrained for {lm.setup.pretraining.steps} steps first (not drawn)")
    return Figure(key, title, "training step (warm-up included)", "bits per token (byte)", tuple(traces),
                  hlines=hlines, notes=tuple(notes))  # fmt: skip


def lm_views(stored: StoredTrial) -> list[View]:
    return [loss_curve(stored), generation_by_context(stored), kv_cache_by_context(stored)]
