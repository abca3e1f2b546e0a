"""Small language models as plain data, no framework: decoder-only LMs in the modern shape and a BERT-style encoder.

A decoder's shape (:class:`DecoderShape`) is what a model's ``config.json`` says (layers, width, heads, KV heads,
feed-forward width, vocabulary, tied embeddings, q/k/v biases), and decides its exact parameter count
(:meth:`DecoderShape.params`) and the bytes of its KV cache (:meth:`DecoderShape.kv_cache_bytes`) without building
it.  Two kinds of presets:

- edgebench's own (``lm_1m`` ... ``lm_100m``) over the byte vocabulary (256 bytes and BOS, EOS, PAD), trained from
  their initial weights on the shipped text or the user's;
- the published shapes of well-known small models (SmolLM2-135M, MobileLLM-125M, Qwen2.5-0.5B, Llama-3.2-1B,
  TinyLlama-1.1B), **shape only**: no weights can be fetched here, so they train and generate from random weights
  at the published size, and every place that shows them says so.  Their parameter totals are the published ones,
  exactly (``rel_tol=0``).

The encoder (:class:`EncoderShape`) is the small-BERT recipe of Turc et al. 2019 (learned positions and token type,
post-norm, GELU feed-forward 4H, H/64 heads, a tanh pooler over [CLS] and a classifier), for classification
fine-tuning.  The torch definitions are :mod:`edgebench.zoo.lm`; the training steps
:mod:`edgebench.backends.torch.tasks.causal_lm` and :mod:`edgebench.backends.torch.tasks.text_classification`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

#: The byte tokenizer's vocabulary: 256 byte values, then BOS, EOS and PAD (:mod:`edgebench.data.text`).
BYTE_VOCAB = 259
#: The linear layers LoRA adapts unless told otherwise (HF Llama's names, which peft users know).
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
DEFAULT_LORA_RANK = 8
DEFAULT_LORA_ALPHA = 16.0
#: Context lengths (tokens) time to first token and decode speed are measured at, unless told (capped at the
#: model's context window).
DEFAULT_CONTEXTS = (64, 256, 1024)
#: Marks every published-shape preset wherever its name is shown.
SHAPE_ONLY = "shape only"
#: The domain ``edgebench models`` lists them under.
DOMAIN = "small language models"


@dataclass(frozen=True)
class DecoderShape:
    """A decoder-only transformer: pre-norm RMSNorm, rotary positions, SwiGLU, grouped-query attention."""

    vocab: int
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    tied: bool = True
    #: Qwen2 puts biases on the q, k and v projections.
    qkv_bias: bool = False
    #: None: ``d_model // heads``.
    head_dim: int | None = None
    #: The context window the model was published with (positions it can attend over).
    max_seq: int = 2048
    rope_theta: float = 10_000.0
    norm_eps: float = 1e-5

    @property
    def hd(self) -> int:
        return self.head_dim or self.d_model // self.heads

    def params(self, vocab: int | None = None) -> int:
        """The exact parameter count (a tied embedding counted once); ``vocab`` overrides the shape's."""
        q_out, kv_out = self.heads * self.hd, self.kv_heads * self.hd
        attention = 2 * self.d_model * q_out + 2 * self.d_model * kv_out
        if self.qkv_bias:
            attention += q_out + 2 * kv_out
        mlp = 3 * self.d_model * self.ffn
        norms = 2 * self.d_model
        embedding = (vocab or self.vocab) * self.d_model * (1 if self.tied else 2)
        return self.layers * (attention + mlp + norms) + embedding + self.d_model  # + the final norm

    def kv_cache_bytes_per_token(self, bytes_per_element: int = 4, batch: int = 1) -> int:
        """K and V of every layer for one token: ``2 * layers * kv_heads * head_dim * bytes`` (times the batch)."""
        return 2 * self.layers * batch * self.kv_heads * self.hd * bytes_per_element

    def kv_cache_bytes(self, tokens: int, batch: int = 1, bytes_per_element: int = 4) -> int:
        """The cache holding ``tokens`` positions of ``batch`` sequences."""
        return tokens * self.kv_cache_bytes_per_token(bytes_per_element, batch)


@dataclass(frozen=True)
class EncoderShape:
    """A BERT-style encoder: ``layers`` (L), ``width`` (H), H/64 heads, feed-forward 4H, ``max_len`` positions."""

    vocab: int
    layers: int
    width: int
    max_len: int = 512

    @property
    def heads(self) -> int:
        return max(self.width // 64, 1)

    def params(self, classes: int, vocab: int | None = None) -> int:
        """The exact parameter count with a ``classes``-way classifier on the pooled [CLS] output."""
        h = self.width
        embedding = (vocab or self.vocab) * h + self.max_len * h + 2 * h + 2 * h  # word, position, type, norm
        layer = (4 * h * h + 4 * h) + 2 * h + (8 * h * h + 5 * h) + 2 * h
        return embedding + self.layers * layer + (h * h + h) + (h * classes + classes)


@dataclass(frozen=True)
class LMSettings:
    """How a language model trains and generates, from the trial's settings (defaults filled here, once)."""

    #: ``train`` or ``infer`` (an inference model's weights are all frozen).
    mode: str = "train"
    finetune: str = "full"
    lora_rank: int = DEFAULT_LORA_RANK
    lora_alpha: float = DEFAULT_LORA_ALPHA
    lora_targets: tuple[str, ...] = LORA_TARGETS
    lora_impl: str = "edgebench"
    checkpointing: str = "none"
    frozen_weights: str = "fp32"
    pretrain_steps: int = 0
    contexts: tuple[int, ...] = ()
    decode_tokens: int = 32
    generations: int = 3

    @classmethod
    def of(cls, trial: object, shape: DecoderShape | EncoderShape | None = None) -> LMSettings:
        """The settings of ``trial`` (a :class:`~edgebench.records.trial.Trial`), defaults filled for ``shape``."""
        contexts = getattr(trial, "contexts", None)
        if contexts is None:
            limit = shape.max_seq if isinstance(shape, DecoderShape) else 0
            decode = getattr(trial, "decode_tokens", 32)
            contexts = tuple(c for c in DEFAULT_CONTEXTS if c + decode <= limit)
        return cls(
            mode=getattr(trial, "mode", "train"),
            finetune=getattr(trial, "finetune", "full"),
            lora_rank=getattr(trial, "lora_rank", None) or DEFAULT_LORA_RANK,
            lora_alpha=getattr(trial, "lora_alpha", None) or DEFAULT_LORA_ALPHA,
            lora_targets=tuple(getattr(trial, "lora_targets", ()) or LORA_TARGETS),
            lora_impl=getattr(trial, "lora_impl", "edgebench"),
            checkpointing=getattr(trial, "checkpointing", "none"),
            frozen_weights=getattr(trial, "frozen_weights", "fp32"),
            pretrain_steps=getattr(trial, "pretrain_steps", 0),
            contexts=tuple(contexts),
            decode_tokens=getattr(trial, "decode_tokens", 32),
            generations=getattr(trial, "generations", 3),
        )

    def describe(self) -> str:
        """``full``, or ``lora r8 alpha16 (7 targets, edgebench)``, with the frozen weights and checkpointing."""
        parts = ["full"]
        if self.finetune == "lora":
            targets = ",".join(self.lora_targets) if self.lora_targets != LORA_TARGETS else "7 projections"
            parts = [f"lora r{self.lora_rank} alpha{self.lora_alpha:g} on {targets} ({self.lora_impl})"]
        if self.frozen_weights != "fp32":
            parts.append(f"{self.frozen_weights} frozen weights")
        if self.checkpointing != "none":
            parts.append("activation checkpointing")
        return ", ".join(parts)


def _seq_presets(vocab: int, lengths: tuple[int, ...] = (128, 256, 512)) -> tuple[Preset, ...]:
    return tuple(Preset(f"seq{n}", (n,), vocab, f"{n}-token training sequences") for n in lengths)


ADAMW = OptimizerSettings(lr=1e-3, weight_decay=0.1, schedule="constant", kind="adamw", betas=(0.9, 0.95))
#: LoRA's adapters train faster and without weight decay (peft's recipes; the spike's 3e-3 on ``lm_10m``).
LORA_OPTIMIZER = OptimizerSettings(lr=3e-3, weight_decay=0.0, schedule="constant", kind="adamw", betas=(0.9, 0.95))


@dataclass(frozen=True)
class LMWorkload(Workload):
    """A decoder-only language model: a :class:`Workload` that also carries its :class:`DecoderShape`."""

    shape: DecoderShape = field(default_factory=lambda: DecoderShape(BYTE_VOCAB, 128, 4, 4, 2, 384))
    #: Whether the shape is a published model's, with no weights here (labelled :data:`SHAPE_ONLY` wherever shown).
    shape_only: bool = False


@dataclass(frozen=True)
class EncoderWorkload(Workload):
    encoder: EncoderShape = field(default_factory=lambda: EncoderShape(BYTE_VOCAB, 2, 128))
    shape_only: bool = False


def _own(name: str, shape: DecoderShape, note: str) -> LMWorkload:
    return LMWorkload(
        name=name,
        domain=DOMAIN,
        description=(
            f"decoder-only LM, {shape.params() / 1e6:.1f}M params: {shape.layers} layers x {shape.d_model}, "
            f"{shape.heads} heads / {shape.kv_heads} KV heads, SwiGLU {shape.ffn}, byte vocabulary; {note}"
        ),
        model=f"edgebench.zoo.lm:{name}",
        input_shape=(128,),
        num_classes=shape.vocab,
        optimizer=ADAMW,
        task="causal_lm",
        presets=_seq_presets(shape.vocab),
        shape=shape,
    )


def _published(name: str, title: str, shape: DecoderShape, published: int, source: str) -> LMWorkload:
    return LMWorkload(
        name=name,
        domain=DOMAIN,
        description=(
            f"{title} ({SHAPE_ONLY}: its published configuration with random weights, none fetched): "
            f"{shape.layers} layers x {shape.d_model}, {shape.heads} heads / {shape.kv_heads} KV heads, "
            f"vocabulary {shape.vocab:,}"
        ),
        model=f"edgebench.zoo.lm:{name.replace('.', '')}",
        input_shape=(128,),
        num_classes=shape.vocab,
        optimizer=ADAMW,
        task="causal_lm",
        presets=_seq_presets(shape.vocab),
        references=(Reference("params", published, f"{title} config.json ({SHAPE_ONLY})", source, rel_tol=0.0),),
        shape=shape,
        shape_only=True,
    )


LM_1M = _own("lm_1m", DecoderShape(BYTE_VOCAB, 128, 4, 4, 2, 384), "the cheapest, for tests and docs")
LM_10M = _own("lm_10m", DecoderShape(BYTE_VOCAB, 384, 6, 6, 2, 1024), "fine-tunes on a phone-class CPU")
LM_30M = _own("lm_30m", DecoderShape(BYTE_VOCAB, 512, 10, 8, 2, 1536), "between the two")
LM_100M = _own("lm_100m", DecoderShape(BYTE_VOCAB, 768, 16, 12, 4, 2048), "where LoRA's speed gain shows")

SMOLLM2_135M = _published(
    "smollm2_135m",
    "SmolLM2-135M",
    DecoderShape(49152, 576, 30, 9, 3, 1536, head_dim=64, max_seq=8192, rope_theta=100_000.0),
    134_515_008,
    "HuggingFaceTB/SmolLM2-135M config.json; 134,515,008 as sum(p.numel()) prints it",
)
MOBILELLM_125M = _published(
    "mobilellm_125m",
    "MobileLLM-125M",
    DecoderShape(32000, 576, 30, 9, 3, 1536),
    124_635_456,
    "facebookresearch/MobileLLM configs/125M/config.json with share_embedding (its pretrain.sh); the paper's 124.6M",
)
QWEN25_05B = _published(
    "qwen2.5_0.5b",
    "Qwen2.5-0.5B",
    DecoderShape(151936, 896, 24, 14, 2, 4864, qkv_bias=True, max_seq=32768, rope_theta=1e6, norm_eps=1e-6),
    494_032_768,
    "Qwen/Qwen2.5-0.5B config.json (QKV bias, tied); 494,032,768 as llama.cpp's n_params prints it",
)
LLAMA32_1B = _published(
    "llama3.2_1b",
    "Llama-3.2-1B",
    DecoderShape(128256, 2048, 16, 32, 8, 8192, head_dim=64, max_seq=131072, rope_theta=500_000.0),
    1_235_814_400,
    "meta-llama/Llama-3.2-1B config.json (tied; llama3 rope scaling not modelled); 1,235,814,400 parameters",
)
TINYLLAMA_11B = _published(
    "tinyllama_1.1b",
    "TinyLlama-1.1B",
    DecoderShape(32000, 2048, 22, 32, 4, 5632, tied=False),
    1_100_048_384,
    "jzhang38/TinyLlama lit_gpt/config.py tiny_LLaMA_1b (untied); 1,100,048,384 as llama.cpp's n_params prints it",
)

#: Every decoder preset, own first.
DECODERS = (LM_1M, LM_10M, LM_30M, LM_100M, SMOLLM2_135M, MOBILELLM_125M, QWEN25_05B, LLAMA32_1B, TINYLLAMA_11B)
SHAPE_ONLY_MODELS = frozenset(w.name for w in DECODERS if w.shape_only)

#: The labelled task of the encoder: which of Macbeth's four most frequent speakers says a speech.
SPEAKERS = 4
#: Where the small BERTs' shapes (L, H; A = H/64, feed-forward 4H) are published.
BERT_SOURCE = "google-research/bert README (24 smaller BERT models); Turc et al. 2019, arXiv 1908.08962"
#: BERT's WordPiece vocabulary, for the count of the published models themselves (tests compare it).
WORDPIECE_VOCAB = 30522


def _encoder(name: str, title: str, layers: int, width: int) -> EncoderWorkload:
    shape = EncoderShape(BYTE_VOCAB, layers, width)
    return EncoderWorkload(
        name=name,
        domain=DOMAIN,
        description=(
            f"{title}-shaped encoder (L={layers}, H={width}, A={shape.heads}; {BERT_SOURCE.split(';')[0]}), byte "
            f"vocabulary, classifies a speech's speaker ({SPEAKERS} classes)"
        ),
        model=f"edgebench.zoo.lm:{name}",
        input_shape=(128,),
        num_classes=SPEAKERS,
        optimizer=OptimizerSettings(lr=3e-4, weight_decay=0.01, schedule="constant", kind="adamw"),
        task="text_classification",
        presets=(Preset("bytes128", (128,), SPEAKERS, "the first 127 bytes of a speech after [CLS]"),),
        encoder=shape,
    )


BERT_TINY = _encoder("bert_tiny", "BERT-Tiny", 2, 128)
BERT_MINI = _encoder("bert_mini", "BERT-Mini", 4, 256)
ENCODERS = (BERT_TINY, BERT_MINI)


def optimizer_for(workload: Workload, settings: LMSettings) -> OptimizerSettings:
    """The workload's optimizer for a full fine-tune, :data:`LORA_OPTIMIZER` for LoRA's adapters."""
    return LORA_OPTIMIZER if settings.finetune == "lora" and settings.mode == "train" else workload.optimizer


def decoder_shape(workload: Workload) -> DecoderShape | None:
    """The decoder shape of a language-model workload, None for any other."""
    return workload.shape if isinstance(workload, LMWorkload) else None


def is_token_model(workload: Workload) -> bool:
    """Whether LoRA, checkpointing and frozen int8 weights apply (the decoders and the encoder)."""
    return isinstance(workload, LMWorkload | EncoderWorkload)


def shape_only(workload: Workload) -> bool:
    return bool(getattr(workload, "shape_only", False))


def lora_target_names(workload: Workload) -> tuple[str, ...]:
    """The linear layers of ``workload``'s model that LoRA can adapt, by name."""
    if isinstance(workload, EncoderWorkload):
        return ("q_proj", "k_proj", "v_proj", "o_proj", "up_proj", "down_proj")
    return LORA_TARGETS


#: Why each other runtime does not run edgebench's language models (yet): one line each, given before anything runs.
#: The seam a runtime fills when it does: a ``model_check`` that stops refusing, and a session with the torch task's
#: ``generate`` (TTFT and decode timings) over its exported graph.
RUNTIME_REFUSALS = {
    "onnxruntime": (
        "the ONNX export of a language model needs its KV cache as graph inputs and outputs and an RMSNorm the "
        "TorchScript exporter can write (opset 17 has none; torch's dynamo exporter needs onnxscript, not a "
        "dependency); run it on torch"
    ),
    "executorch": (
        "the ExecuTorch lowering of a language model (torch.export with a static KV cache, then XNNPACK) is not "
        "built yet; run it on torch"
    ),
    "litert": (
        "litert-torch converts a model of one input tensor here; a language model's generation needs its KV cache "
        "as model inputs and outputs (litert-torch's generative API), which is not built yet; run it on torch"
    ),
}


def runtime_refusal(workload: Workload, backend: str) -> str | None:
    """Why ``backend`` cannot run ``workload``, a language model (None: it is not one, or the backend can)."""
    if not is_token_model(workload):
        return None
    reason = RUNTIME_REFUSALS.get(backend)
    return None if reason is None else f"the {backend} backend cannot run {workload.name}: {reason}"
