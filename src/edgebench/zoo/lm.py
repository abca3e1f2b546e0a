"""Small language models in plain torch: a decoder-only LM in the modern shape, with a KV cache, and a BERT-style
encoder for classification.

The decoder is the Llama / Qwen / SmolLM recipe, nanoGPT-concise: pre-norm ``nn.RMSNorm``, rotary positions
(rotate-half layout, as HF Llama), a SwiGLU MLP, grouped-query attention through
``F.scaled_dot_product_attention(enable_gqa=True)`` and tied input and output embeddings.  Module names follow HF
Llama (``q_proj k_proj v_proj o_proj gate_proj up_proj down_proj``) so the LoRA target names users know from peft work
unchanged, and layer tables read ``Attention``, ``SwiGLU``, ``RMSNorm``, ``Embedding`` as the kinds of layer they are.

The KV cache (:class:`KVCache`) is two preallocated buffers ``(layers, batch, kv_heads, capacity, head_dim)`` written
by slice assignment; attention takes three paths: one new token (decode: no mask), a prompt into an empty cache
(``is_causal``), and a chunk after cached tokens (an explicit ``tril(diagonal=start)`` mask).  Cached prefill, chunk
and decode reproduce a full forward (``tests/unit/zoo/test_lm.py``).  Positions are Python ints, so the cached path
is eager-only: an exported graph (ExecuTorch, ONNX Runtime) takes the cache as inputs and outputs instead.

Shapes and exact parameter counts are :mod:`edgebench.workloads.lm`'s.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from edgebench.workloads.lm import (
    BERT_MINI,
    BERT_TINY,
    LLAMA32_1B,
    LM_1M,
    LM_10M,
    LM_30M,
    LM_100M,
    MOBILELLM_125M,
    QWEN25_05B,
    SMOLLM2_135M,
    TINYLLAMA_11B,
    DecoderShape,
    EncoderShape,
    EncoderWorkload,
    LMWorkload,
)


def rope_tables(shape: DecoderShape, length: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``(2, length, head_dim)``: the cos and sin of every position's rotation, rotate-half layout."""
    hd = shape.hd
    inv = 1.0 / (shape.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float32, device=device) / hd))
    angles = torch.outer(torch.arange(length, dtype=torch.float32, device=device), inv)
    angles = torch.cat((angles, angles), dim=-1)
    return torch.stack((angles.cos(), angles.sin()))


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


class KVCache(nn.Module):
    """K and V of every layer for ``capacity`` positions of ``batch`` sequences, preallocated.

    ``memory_category`` tells the memory categorizer (:mod:`edgebench.backends.torch.memory`) what its buffers
    are.  Its bytes are ``2 * layers * batch * kv_heads * capacity * head_dim * element size``
    (:meth:`~edgebench.workloads.lm.DecoderShape.kv_cache_bytes`), allocated whole, not as it fills.
    """

    memory_category = "kv_cache"

    def __init__(
        self, shape: DecoderShape, batch: int, capacity: int, *, dtype: torch.dtype = torch.float32, device: str = "cpu"
    ) -> None:
        super().__init__()
        size = (shape.layers, batch, shape.kv_heads, capacity, shape.hd)
        self.register_buffer("k", torch.zeros(size, dtype=dtype, device=device), persistent=False)
        self.register_buffer("v", torch.zeros(size, dtype=dtype, device=device), persistent=False)
        self.capacity = capacity

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor, start: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Write positions ``start...`` of ``layer``; return every position cached so far."""
        end = start + k.shape[2]
        if end > self.capacity:
            raise ValueError(f"the KV cache holds {self.capacity} positions; {end} asked")
        self.k[layer, :, :, start:end] = k
        self.v[layer, :, :, start:end] = v
        return self.k[layer, :, :, :end], self.v[layer, :, :, :end]

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes


class Attention(nn.Module):
    """Multi-head attention with ``kv_heads`` shared K/V heads (GQA), rotary positions when ``rope`` and a causal
    mask when ``causal`` (the encoder has neither and a key padding mask instead)."""

    def __init__(
        self, width: int, heads: int, kv_heads: int, head_dim: int, *, bias: bool, out_bias: bool, causal: bool
    ) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.causal = heads, kv_heads, head_dim, causal
        self.q_proj = nn.Linear(width, heads * head_dim, bias=bias)
        self.k_proj = nn.Linear(width, kv_heads * head_dim, bias=bias)
        self.v_proj = nn.Linear(width, kv_heads * head_dim, bias=bias)
        self.o_proj = nn.Linear(heads * head_dim, width, bias=out_bias)

    def forward(
        self,
        x: torch.Tensor,
        rope: torch.Tensor | None = None,
        cache: KVCache | None = None,
        layer: int = 0,
        start: int = 0,
        pad_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        if rope is not None:
            q, k = apply_rope(q, rope[0], rope[1]), apply_rope(k, rope[0], rope[1])
        if cache is not None:
            k, v = cache.update(layer, k, v, start)
        gqa = self.kv_heads != self.heads
        if not self.causal:
            mask = None if pad_mask is None else ~pad_mask[:, None, None, :]  # True: attend
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)
        elif t == 1:  # one new token attends to everything cached
            y = F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
        elif k.shape[2] == t:  # a prompt into an empty cache, or training
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
        else:  # a chunk after cached tokens: query i sees keys up to start + i
            mask = torch.ones(t, k.shape[2], dtype=torch.bool, device=x.device).tril(diagonal=start)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    """``down(silu(gate(x)) * up(x))``, the Llama MLP."""

    def __init__(self, width: int, ffn: int) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(width, ffn, bias=False)
        self.up_proj = nn.Linear(width, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, width, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderBlock(nn.Module):
    def __init__(self, shape: DecoderShape) -> None:
        super().__init__()
        self.attn_norm = nn.RMSNorm(shape.d_model, eps=shape.norm_eps)
        self.attn = Attention(
            shape.d_model, shape.heads, shape.kv_heads, shape.hd, bias=shape.qkv_bias, out_bias=False, causal=True
        )
        self.mlp_norm = nn.RMSNorm(shape.d_model, eps=shape.norm_eps)
        self.mlp = SwiGLU(shape.d_model, shape.ffn)

    def forward(
        self, x: torch.Tensor, rope: torch.Tensor, cache: KVCache | None = None, layer: int = 0, start: int = 0
    ) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), rope, cache, layer, start)
        return x + self.mlp(self.mlp_norm(x))


class DecoderLM(nn.Module):
    """Token ids ``(batch, t)`` -> logits ``(batch, t, vocab)``; with a cache, ``t`` tokens continue ``start``."""

    def __init__(self, shape: DecoderShape, positions: int = 2048) -> None:
        super().__init__()
        self.shape = shape
        self.embed = nn.Embedding(shape.vocab, shape.d_model)
        self.blocks = nn.ModuleList(DecoderBlock(shape) for _ in range(shape.layers))
        self.norm = nn.RMSNorm(shape.d_model, eps=shape.norm_eps)
        self.lm_head = nn.Linear(shape.d_model, shape.vocab, bias=False)
        if shape.tied:
            self.lm_head.weight = self.embed.weight
        self.register_buffer("rope", rope_tables(shape, min(positions, shape.max_seq)), persistent=False)
        #: Recompute each block in backward instead of keeping its activations (training without a cache only).
        self.checkpoint_blocks = False
        self.apply(_init_weights)
        for name, p in self.named_parameters():  # GPT-2: the residual branches' outputs shrink with depth
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * shape.layers))

    def ensure_positions(self, positions: int) -> None:
        """Grow the rotary tables to ``positions`` (the longest context a run asks for), outside any timing."""
        if positions > self.rope.shape[1]:
            if positions > self.shape.max_seq:
                raise ValueError(f"{positions} positions: the model's context window is {self.shape.max_seq}")
            self.rope = rope_tables(self.shape, positions, self.rope.device)

    def new_cache(self, batch: int, capacity: int) -> KVCache:
        return KVCache(self.shape, batch, capacity, dtype=self.embed.weight.dtype, device=str(self.rope.device))

    def forward(
        self, tokens: torch.Tensor, cache: KVCache | None = None, start: int = 0, last_only: bool = False
    ) -> torch.Tensor:
        """``last_only``: the logits of the last position only (a generator's prefill needs no others)."""
        t = tokens.shape[1]
        rope = self.rope[:, start : start + t]
        x = self.embed(tokens)
        for i, block in enumerate(self.blocks):
            if self.checkpoint_blocks and self.training and cache is None and torch.is_grad_enabled():
                x = checkpoint(block, x, rope, use_reentrant=False)
            else:
                x = block(x, rope, cache, i, start)
        if last_only:
            x = x[:, -1:]
        return self.lm_head(self.norm(x))  # type: ignore[no-any-return]


def _init_weights(m: nn.Module) -> None:
    if isinstance(m, (nn.Linear, nn.Embedding)):
        nn.init.normal_(m.weight, 0.0, 0.02)
        if getattr(m, "bias", None) is not None:
            nn.init.zeros_(m.bias)


@torch.no_grad()
def greedy(model: nn.Module, prompt: torch.Tensor, new_tokens: int, cache: KVCache) -> torch.Tensor:
    """Greedy decoding with ``cache``: the prompt in one pass, then one token per pass; returns the new tokens."""
    logits = model(prompt, cache, 0, True)
    position, out = prompt.shape[1], []
    token = logits[:, -1:].argmax(-1)
    for _ in range(new_tokens - 1):
        out.append(token)
        token = model(token, cache, position, True)[:, -1:].argmax(-1)
        position += 1
    out.append(token)
    return torch.cat(out, dim=1)


class FeedForward(nn.Module):
    """BERT's feed-forward: ``down(gelu(up(x)))``, 4x wide."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.up_proj = nn.Linear(width, 4 * width)
        self.down_proj = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.gelu(self.up_proj(x)))  # type: ignore[no-any-return]


class EncoderBlock(nn.Module):
    """BERT's post-norm layer: ``norm(x + attention(x))``, then ``norm(x + feed_forward(x))``."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.attn = Attention(width, heads, heads, width // heads, bias=True, out_bias=True, causal=False)
        self.attn_norm = nn.LayerNorm(width, eps=1e-12)
        self.mlp = FeedForward(width)
        self.mlp_norm = nn.LayerNorm(width, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.attn_norm(x + self.dropout(self.attn(x, pad_mask=pad_mask)))
        return self.mlp_norm(x + self.dropout(self.mlp(x)))  # type: ignore[no-any-return]


class EncoderClassifier(nn.Module):
    """Token ids ``(batch, t)`` (``[CLS]`` first) -> class logits, from the pooled ``[CLS]`` output."""

    def __init__(self, shape: EncoderShape, classes: int, vocab: int | None = None) -> None:
        super().__init__()
        h = shape.width
        self.word = nn.Embedding(vocab or shape.vocab, h)
        self.position = nn.Embedding(shape.max_len, h)
        self.token_type = nn.Embedding(2, h)
        self.embed_norm = nn.LayerNorm(h, eps=1e-12)
        self.blocks = nn.ModuleList(EncoderBlock(h, shape.heads) for _ in range(shape.layers))
        self.pooler = nn.Linear(h, h)
        self.classifier = nn.Linear(h, classes)
        self.dropout = nn.Dropout(0.1)
        self.checkpoint_blocks = False
        self.apply(_init_weights)

    def forward(self, tokens: torch.Tensor, pad_mask: torch.Tensor | None = None) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.word(tokens) + self.position(positions) + self.token_type(torch.zeros_like(tokens))
        x = self.dropout(self.embed_norm(x))
        for block in self.blocks:
            if self.checkpoint_blocks and self.training and torch.is_grad_enabled():
                x = checkpoint(block, x, pad_mask, use_reentrant=False)
            else:
                x = block(x, pad_mask)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))  # type: ignore[no-any-return]


def decoder(workload: LMWorkload, num_classes: int, input_shape: tuple[int, ...]) -> DecoderLM:
    """The workload's decoder with ``num_classes`` as its vocabulary, rotary tables for its sequence length."""
    shape = workload.shape
    if num_classes != shape.vocab:
        from dataclasses import replace

        shape = replace(shape, vocab=num_classes)
    return DecoderLM(shape, positions=max(input_shape[0], 1))


def encoder(workload: EncoderWorkload, num_classes: int, input_shape: tuple[int, ...]) -> EncoderClassifier:
    return EncoderClassifier(workload.encoder, num_classes)


# One factory per workload, as every zoo module names its models (``edgebench.zoo.lm:lm_10m``).
def lm_1m(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(LM_1M, num_classes, shape)


def lm_10m(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(LM_10M, num_classes, shape)


def lm_30m(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(LM_30M, num_classes, shape)


def lm_100m(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(LM_100M, num_classes, shape)


def smollm2_135m(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(SMOLLM2_135M, num_classes, shape)


def mobilellm_125m(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(MOBILELLM_125M, num_classes, shape)


def qwen25_05b(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(QWEN25_05B, num_classes, shape)


def llama32_1b(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(LLAMA32_1B, num_classes, shape)


def tinyllama_11b(num_classes: int, shape: tuple[int, ...]) -> DecoderLM:
    return decoder(TINYLLAMA_11B, num_classes, shape)


def bert_tiny(num_classes: int, shape: tuple[int, ...]) -> EncoderClassifier:
    return encoder(BERT_TINY, num_classes, shape)


def bert_mini(num_classes: int, shape: tuple[int, ...]) -> EncoderClassifier:
    return encoder(BERT_MINI, num_classes, shape)
