"""What a language-model trial records beyond any trial's figures: how it was set up (the worker's ``ready`` event),
its held-out loss over steps, its generations, and the result group built from them (``language_model``).

Units are in the names: ``tokens_per_s``, ``ttft_ms``, ``energy_per_token_j``, ``kv_cache_bytes``.  Loss is in nats
per token (the training loss) and in bits per byte, the only figure comparable across tokenizers; perplexity is per
token.  Every language-model figure here was measured by the worker that ran the trial; an energy figure is None
where no power sensor measured it, never estimated.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from edgebench.records.memory import MemoryByCategory
from edgebench.records.model import Record


class _Part(Record):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LMText(_Part):
    """The text the model trained on, as byte tokens, and the two reference lines its held-out loss is read against:
    ``uniform`` (every token equally likely) and ``unigram`` (the training part's byte frequencies; a model above
    it has learned no more than which bytes are common)."""

    name: str
    nbytes: int
    sha256: str
    train_bytes: int
    test_bytes: int
    #: The first half of the training part, used only to pretrain the base (0: no pretraining).
    pretrain_bytes: int = 0
    unigram_bits_per_byte: float
    uniform_bits_per_byte: float


class Pretraining(_Part):
    """The base's own phase before the fine-tune (``--pretrain-steps``): full training on text the fine-tune never
    sees, cached by its configuration and the text (``from_cache``: loaded, not trained, in this trial)."""

    steps: int
    seconds: float
    from_cache: bool
    loss_first: float | None = None
    loss_last: float | None = None


class LMSetup(_Part):
    """How the worker built a language-model trial: what trains, what is frozen, the text, and what generation runs."""

    #: ``full``, or ``lora r8 alpha16 on 7 projections (edgebench)``, with the frozen weights and checkpointing.
    finetune: str
    lora_rank: int | None = None
    lora_alpha: float | None = None
    lora_targets: list[str] | None = None
    lora_impl: str | None = None
    #: Linear layers LoRA wrapped.
    lora_layers: int | None = None
    checkpointing: str = "none"
    frozen_weights: str = "fp32"
    #: Element counts: parameters that train, and weights that do not (an int8 weight counts its int8 elements).
    trainable_params: int
    frozen_params: int
    tokens_per_step: int
    #: ``bytes (259)``: the byte tokenizer and its vocabulary.
    tokenizer: str
    #: A published model's configuration with random weights (no weights can be fetched): its figures are its
    #: shape's, never the published model's quality.
    shape_only: bool = False
    text: LMText | None = None
    pretraining: Pretraining | None = None
    contexts: list[int] = Field(default_factory=list)
    decode_tokens: int = 0


class HeldOutPoint(_Part):
    """One held-out evaluation: after ``step`` training steps (warm-up included; 0 = the base before any),
    ``elapsed_s`` after the first training step began (None for the one before it)."""

    step: int
    elapsed_s: float | None
    loss_nats_per_token: float
    bits_per_byte: float
    perplexity: float
    accuracy: float


class PerplexityVerdict(_Part):
    """Whether held-out perplexity fell, by the rule the docs state: the last evaluation below both the base's own
    (step 0) and the unigram line.  ``why`` gives the figures either way."""

    falls: bool
    why: str


class TimeToTarget(_Part):
    """Time to perplexity (``--until-bits-per-byte``), as time to accuracy: from the first training step to the end
    of the evaluation that reached it, evaluations included; energy measured over that span (None without a sensor)."""

    target_bits_per_byte: float
    target_perplexity: float
    reached: bool
    time_s: float | None = None
    steps: int | None = None
    tokens: int | None = None
    energy_j: float | None = None


class Generation(_Part):
    """Greedy generation at one context length, batch 1 with the KV cache: time to first token (the prefill of
    ``context_tokens`` and the first token), then decoding; energy per token over the generations' span (prefill
    included) divided by the tokens they generated."""

    context_tokens: int
    new_tokens: int
    generations: int
    ttft_ms: float
    ttft_ms_p95: float | None = None
    decode_tokens_per_s: float | None
    decode_ms_per_token: float | None
    #: The cache allocated for ``context_tokens + new_tokens`` positions, measured on its buffers.
    kv_cache_bytes: int
    kv_cache_bytes_per_token: int
    energy_per_token_j: float | None = None
    energy_per_token_ci95_j: float | None = None


class LanguageModel(_Part):
    """A language-model trial's own figures (the ``language_model`` group of a result)."""

    setup: LMSetup
    #: Training tokens per second over the measured steps (batch x sequence length per step), or, for an inference
    #: trial, tokens of the measured forward passes per second.
    tokens_per_s: float | None = None
    energy_per_token_j: float | None = None
    energy_per_token_ci95_j: float | None = None
    held_out: list[HeldOutPoint] | None = None
    verdict: PerplexityVerdict | None = None
    time_to_target: TimeToTarget | None = None
    generation: list[Generation] | None = None
    #: Memory by category of the longest context's generation (its KV cache a category), with the generation
    #: phase's peak.
    generation_memory: MemoryByCategory | None = None
    notes: list[str] | None = None
