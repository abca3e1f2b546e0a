"""Splitting a language model's generation between the device and a server: after which decoder block the server
takes over, and what crosses the link for it, per prompt and per generated token; and handing the KV cache over
between prefill and decoding.

A decoder generates one token at a time, so a split is paid on every token, not once: at a split after block ``k``
the device embeds each token and runs blocks ``0..k-1``, sends the hidden state (``d_model`` floats) up, and the
server runs the rest and sends the next token's id (8 bytes) down, one round trip per token.  Each side keeps the KV
cache of its own blocks (it never crosses at a split); it crosses once in a *hand-over*: the device prefills the
prompt and ships its whole cache up for the server to decode, or the server prefills and ships it down.

Times: the device's are the trial's measured time to first token and decode time per token at the context length,
apportioned over the embedding, the blocks and the output layer by their FLOPs (exact for this shape: each block's
projections, and its attention over the tokens before it); the server's are the device's divided by a speed-up
(labelled, as ``edgebench partition``'s).  Links are :mod:`.network`'s profiles.  Energy is not ranked here.
"""

from __future__ import annotations

from pydantic import ConfigDict, Field

from edgebench.partition.network import NetworkProfile
from edgebench.records.model import Record
from edgebench.workloads.lm import DecoderShape

#: Bytes of one token id on the wire (an int64, as the model takes it).
TOKEN_ID_BYTES = 8
FLOAT_BYTES = 4


class GenerationPoint(Record):
    """One split: the first ``blocks_on_device`` decoder blocks on the device (with the embedding), the rest and
    the output layer on the server (all on the device: ``mobile only``; none: ``cloud only``)."""

    model_config = ConfigDict(frozen=True)

    blocks_on_device: int
    label: str
    #: Bytes sent up for the prompt, up and down per generated token after the first.
    prompt_up_bytes: int
    token_up_bytes: int
    token_down_bytes: int
    kv_cache_device_bytes: int
    kv_cache_server_bytes: int
    ttft_ms: float
    ms_per_token: float
    #: The whole generation: time to first token and ``new_tokens - 1`` more.
    total_ms: float
    device_ttft_ms: float
    transfer_ttft_ms: float
    device_ms_per_token: float
    transfer_ms_per_token: float


class HandOver(Record):
    """Prefill on one side, decoding on the other: the KV cache of the prompt crosses once."""

    model_config = ConfigDict(frozen=True)

    label: str
    kv_cache_bytes: int
    kv_transfer_ms: float
    ttft_ms: float
    ms_per_token: float
    total_ms: float


class GenerationPartition(Record):
    model_config = ConfigDict(frozen=True)

    model: str
    trial_id: str
    context_tokens: int
    new_tokens: int
    network: NetworkProfile
    device_source: str
    cloud_source: str
    points: list[GenerationPoint]
    best_total: GenerationPoint
    best_ttft: GenerationPoint
    hand_overs: list[HandOver]
    notes: list[str] = Field(default_factory=list)


def block_flops(shape: DecoderShape, tokens: int, before: int) -> float:
    """FLOPs of one decoder block on ``tokens`` new tokens after ``before`` cached ones (2 per multiply-add):
    its seven projections, and attention's two matmuls over every token a query sees."""
    q_out, kv_out = shape.heads * shape.hd, shape.kv_heads * shape.hd
    projections = 2 * (2 * shape.d_model * q_out + 2 * shape.d_model * kv_out + 3 * shape.d_model * shape.ffn)
    seen = tokens * before + tokens * (tokens + 1) / 2  # query i sees every cached token and itself and those before
    return projections * tokens + 4 * shape.heads * shape.hd * seen


def unit_shares(shape: DecoderShape, tokens: int, before: int) -> tuple[float, list[float], float]:
    """The shares of a pass over ``tokens`` tokens (after ``before``) of the embedding (a lookup: 0), each block, and
    the output layer (the last position only, as the generator computes it)."""
    blocks = [block_flops(shape, tokens, before)] * shape.layers
    head = 2.0 * shape.d_model * shape.vocab
    total = sum(blocks) + head
    return 0.0, [b / total for b in blocks], head / total


def generation_partition(
    model: str,
    trial_id: str,
    shape: DecoderShape,
    context: int,
    new_tokens: int,
    ttft_ms: float,
    ms_per_token: float,
    network: NetworkProfile,
    speedup: float,
    cloud_source: str,
) -> GenerationPartition:
    """Every split point of the generation, the best for the whole generation and for the first token, and the two
    hand-overs (see the module docstring)."""
    _, prefill_blocks, prefill_head = unit_shares(shape, context, 0)
    _, decode_blocks, decode_head = unit_shares(shape, 1, context + new_tokens // 2)
    kv_per_block = shape.kv_cache_bytes(context + new_tokens) // shape.layers
    rtt = network.rtt_ms
    points = []
    for k in range(shape.layers + 2):  # 0: cloud only ... layers + 1: mobile only (the output layer too)
        on_device = min(k, shape.layers)
        mobile_only = k == shape.layers + 1
        prefill_device = sum(prefill_blocks[:on_device]) + (prefill_head if mobile_only else 0.0)
        decode_device = sum(decode_blocks[:on_device]) + (decode_head if mobile_only else 0.0)
        device_ttft, device_token = ttft_ms * prefill_device, ms_per_token * decode_device
        cloud_ttft = ttft_ms * (1 - prefill_device) / speedup
        cloud_token = ms_per_token * (1 - decode_device) / speedup
        if mobile_only:
            prompt_up = token_up = token_down = 0
            transfer_ttft = transfer_token = 0.0
        elif k == 0:  # the prompt's ids up; the server generates and streams each token down
            prompt_up, token_up, token_down = context * TOKEN_ID_BYTES, 0, TOKEN_ID_BYTES
            transfer_ttft = network.up_ms(prompt_up) + rtt + network.down_ms(TOKEN_ID_BYTES)
            transfer_token = network.down_ms(token_down)
        else:  # hidden states up, the next token down: one round trip per token
            prompt_up = context * shape.d_model * FLOAT_BYTES
            token_up, token_down = shape.d_model * FLOAT_BYTES, TOKEN_ID_BYTES
            transfer_ttft = network.up_ms(prompt_up) + rtt + network.down_ms(TOKEN_ID_BYTES)
            transfer_token = network.up_ms(token_up) + rtt + network.down_ms(token_down)
        first = device_ttft + transfer_ttft + cloud_ttft
        per_token = device_token + transfer_token + cloud_token
        label = "cloud only" if k == 0 else "mobile only" if mobile_only else f"after blocks.{k - 1}"
        points.append(
            GenerationPoint(
                blocks_on_device=on_device,
                label=label,
                prompt_up_bytes=prompt_up,
                token_up_bytes=token_up,
                token_down_bytes=token_down,
                kv_cache_device_bytes=kv_per_block * on_device,
                kv_cache_server_bytes=kv_per_block * (shape.layers - on_device),
                ttft_ms=first,
                ms_per_token=per_token,
                total_ms=first + (new_tokens - 1) * per_token,
                device_ttft_ms=device_ttft,
                transfer_ttft_ms=transfer_ttft,
                device_ms_per_token=device_token,
                transfer_ms_per_token=transfer_token,
            )
        )
    return GenerationPartition(
        model=model,
        trial_id=trial_id,
        context_tokens=context,
        new_tokens=new_tokens,
        network=network,
        device_source=f"trial {trial_id}: time to first token {ttft_ms:.1f} ms and {ms_per_token:.2f} ms per token "
        f"at {context} tokens, apportioned by FLOPs",
        cloud_source=cloud_source,
        points=points,
        best_total=min(points, key=lambda p: p.total_ms),
        best_ttft=min(points, key=lambda p: p.ttft_ms),
        hand_overs=_hand_overs(shape, context, new_tokens, ttft_ms, ms_per_token, network, speedup),
        notes=[
            "each side keeps the KV cache of its own blocks: at a split it never crosses the link, the hidden state "
            "of every token does (one round trip per token)",
            "energy is not ranked for generation: the link's radio and the device's power per block are not split",
        ],
    )


def _hand_overs(
    shape: DecoderShape,
    context: int,
    new_tokens: int,
    ttft_ms: float,
    ms_per_token: float,
    network: NetworkProfile,
    speedup: float,
) -> list[HandOver]:
    """The prompt's KV cache (every block's, for the context and the first token) crossing once, either way."""
    kv = shape.kv_cache_bytes(context + 1)
    rtt = network.rtt_ms
    up, down = network.up_ms(kv), network.down_ms(kv)
    stream = network.down_ms(TOKEN_ID_BYTES)
    # device prefills, the server decodes (streaming tokens down); the first token is the device's own
    device_first = HandOver(
        label="prefill on the device, decode on the server",
        kv_cache_bytes=kv,
        kv_transfer_ms=up,
        ttft_ms=ttft_ms,
        ms_per_token=ms_per_token / speedup + stream,
        total_ms=ttft_ms + up + rtt + (new_tokens - 1) * (ms_per_token / speedup + stream),
    )
    server_prefill = network.up_ms(context * TOKEN_ID_BYTES) + rtt + ttft_ms / speedup
    server_first = HandOver(
        label="prefill on the server, decode on the device",
        kv_cache_bytes=kv,
        kv_transfer_ms=down,
        ttft_ms=server_prefill + network.down_ms(TOKEN_ID_BYTES),
        ms_per_token=ms_per_token,
        total_ms=server_prefill + down + (new_tokens - 1) * ms_per_token,
    )
    return [device_first, server_first]
