"""A language model's figures from its worker's events: tokens per second, energy per token, the held-out loss over
steps with the verdict on it, time to perplexity, and per context length the time to first token, the decode speed,
the KV cache and the energy per generated token.

The verdict is the docs' rule, stated once here: held-out perplexity *falls* when the last evaluation is below both
the base's own (the evaluation before any training step) and the text's unigram line (a model above that line has
learned no more than which bytes are common, which any random start learns first).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from edgebench.measure.energy import idle_window
from edgebench.measure.energy_error import energy_interval
from edgebench.measure.power import device_energy
from edgebench.records.events import Done, Eval, EventsLike, Generate, Ready, Step, as_events, first
from edgebench.records.lm import Generation, HeldOutPoint, LanguageModel, LMSetup, PerplexityVerdict, TimeToTarget
from edgebench.records.trial import Trial
from edgebench.sensors.samples import Samples


def held_out_curve(events: EventsLike) -> list[HeldOutPoint]:
    """The held-out evaluations in order: the base's (step 0), then one per ``eval_every`` measured steps, each
    counted in training steps (warm-up included) and timed from the first training step's start."""
    events = as_events(events)
    steps = [e for e in events if isinstance(e, Step) and e.phase in ("warmup", "train")]
    warmup = sum(1 for s in steps if s.phase == "warmup")
    t0 = steps[0].start_ns if steps else None
    points = []
    for e in events:
        if not isinstance(e, Eval) or e.bits_per_byte is None or e.loss_nats_per_token is None:
            continue
        step = 0 if e.before_training else warmup + e.step
        elapsed = None if e.before_training or t0 is None else (e.end_ns - t0) / 1e9
        points.append(
            HeldOutPoint(
                step=step,
                elapsed_s=elapsed,
                loss_nats_per_token=e.loss_nats_per_token,
                bits_per_byte=e.bits_per_byte,
                perplexity=math.exp(e.loss_nats_per_token),
                accuracy=e.accuracy,
            )
        )
    return points


def perplexity_verdict(points: list[HeldOutPoint], unigram_bits_per_byte: float) -> PerplexityVerdict | None:
    """Whether held-out perplexity fell (the module's rule); None with fewer than two evaluations."""
    if len(points) < 2:
        return None
    base, last = points[0], points[-1]
    figures = (
        f"held-out {last.bits_per_byte:.3f} bits/byte after {last.step} steps, from {base.bits_per_byte:.3f} at step "
        f"{base.step}; unigram line {unigram_bits_per_byte:.3f}"
    )
    if last.bits_per_byte >= base.bits_per_byte:
        return PerplexityVerdict(falls=False, why=f"{figures}: it did not fall")
    if last.bits_per_byte >= unigram_bits_per_byte:
        return PerplexityVerdict(
            falls=False,
            why=f"{figures}: it fell but stays above the unigram line, so the model has learned little more than "
            "byte frequencies (pretrain the base first: --pretrain-steps)",
        )
    return PerplexityVerdict(falls=True, why=f"{figures}: it fell, below the base's start and the unigram line")


def time_to_target(trial: Trial, setup: LMSetup, events: EventsLike, samples: Samples | None) -> TimeToTarget | None:
    """Time to perplexity (``until_bits_per_byte``): as time to accuracy, evaluations included."""
    if trial.until_bits_per_byte is None or setup.text is None:
        return None
    target = (
        setup.text.unigram_bits_per_byte if trial.until_bits_per_byte == "unigram" else float(trial.until_bits_per_byte)
    )
    events = as_events(events)
    steps = [e for e in events if isinstance(e, Step) and e.phase in ("warmup", "train")]
    warmup = sum(1 for s in steps if s.phase == "warmup")
    found = TimeToTarget(target_bits_per_byte=target, target_perplexity=2.0**target, reached=False)
    reached = next(
        (
            e
            for e in events
            if isinstance(e, Eval) and not e.before_training and (e.bits_per_byte or math.inf) <= target
        ),
        None,
    )
    if reached is None or not steps:
        return found
    t0 = steps[0].start_ns
    energy = device_energy(samples, t0, reached.end_ns, idle_window(events)) if samples is not None else None
    taken = warmup + reached.step
    return found.model_copy(
        update={
            "reached": True,
            "time_s": (reached.end_ns - t0) / 1e9,
            "steps": taken,
            "tokens": taken * setup.tokens_per_step,
            "energy_j": energy.active_j if energy is not None else None,
        }
    )


def _energy_per_token(
    samples: Samples | None, t0: int, t1: int, idle: tuple[int, int] | None, tokens: int
) -> tuple[float | None, float | None]:
    """Energy above idle over ``[t0, t1]`` per token, and its 95% half-width; None without a sensor or where the
    window cannot resolve it."""
    if samples is None or len(samples) < 2 or tokens <= 0 or t1 <= t0:
        return None, None
    figures = device_energy(samples, t0, t1, idle)
    if figures is None:
        return None, None
    interval = energy_interval(samples, figures, t0, t1, idle)
    if interval.refused is not None:
        return None, None
    ci = None if interval.ci95_j is None else interval.ci95_j / tokens
    return figures.active_j / tokens, ci


def generations(events: EventsLike, samples: Samples | None) -> list[Generation]:
    """Per context length, from its timed generations (the untimed first one of each left out)."""
    events = as_events(events)
    idle = idle_window(events)
    by_context: dict[int, list[Generate]] = defaultdict(list)
    for e in events:
        if isinstance(e, Generate) and not e.warmup:
            by_context[e.context].append(e)
    out = []
    for context, runs in by_context.items():
        ttft = np.array([(g.first_token_ns - g.start_ns) / 1e6 for g in runs])
        decode_s = sum(g.end_ns - g.first_token_ns for g in runs) / 1e9
        decoded = sum(g.new_tokens - 1 for g in runs)
        rate = decoded / decode_s if decode_s > 0 and decoded else None
        tokens = sum(g.new_tokens for g in runs)
        per_token_j, ci = _energy_per_token(samples, runs[0].start_ns, runs[-1].end_ns, idle, tokens)
        new_tokens = runs[0].new_tokens
        out.append(
            Generation(
                context_tokens=context,
                new_tokens=new_tokens,
                generations=len(runs),
                ttft_ms=float(np.median(ttft)),
                ttft_ms_p95=float(np.percentile(ttft, 95)) if len(ttft) > 1 else None,
                decode_tokens_per_s=rate,
                decode_ms_per_token=1e3 / rate if rate else None,
                kv_cache_bytes=runs[0].kv_cache_bytes,
                kv_cache_bytes_per_token=runs[0].kv_cache_bytes // (context + new_tokens),
                energy_per_token_j=per_token_j,
                energy_per_token_ci95_j=ci,
            )
        )
    return sorted(out, key=lambda g: g.context_tokens)


def language_model(
    trial: Trial,
    events: EventsLike,
    samples: Samples | None,
    measured: list[Step],
    energy_j: float | None,
    energy_ci95_j: float | None,
) -> LanguageModel | None:
    """The ``language_model`` group of a trial that ran to its end (None for any other model)."""
    events = as_events(events)
    ready = first(events, Ready)
    setup = ready.language_model if ready is not None else None
    if setup is None:
        return None
    done = first(events, Done)
    total_s = sum(s.end_ns - s.start_ns for s in measured) / 1e9
    tokens = setup.tokens_per_step * len(measured)
    curve = held_out_curve(events)
    notes = []
    inside = [e for e in events if isinstance(e, Eval) and not e.before_training]
    if inside and measured:
        spent = sum(e.end_ns - e.start_ns for e in inside) / 1e9
        notes.append(
            f"{len(inside)} held-out evaluations ({spent:.2f} s) ran between the measured steps: the steps' times "
            "leave them out; the phase's CPU share and energy include them"
        )
    if setup.shape_only:
        notes.append("shape only: a published configuration with random weights; its loss says nothing of the model")
    unigram = setup.text.unigram_bits_per_byte if setup.text is not None else None
    return LanguageModel(
        setup=setup,
        tokens_per_s=tokens / total_s if total_s > 0 else None,
        energy_per_token_j=energy_j / tokens if energy_j is not None and tokens else None,
        energy_per_token_ci95_j=energy_ci95_j / tokens if energy_ci95_j is not None and tokens else None,
        held_out=curve or None,
        verdict=perplexity_verdict(curve, unigram) if unigram is not None else None,
        time_to_target=time_to_target(trial, setup, events, samples),
        generation=generations(events, samples) or None,
        generation_memory=done.generation_memory if done is not None else None,
        notes=notes or None,
    )
