"""A language model's generation split between device and server: what crosses per prompt and per token, the KV
cache on each side (never crossing at a split), and the hand-over that ships it once."""

from __future__ import annotations

import pytest

from edgebench.partition.generation import block_flops, generation_partition, unit_shares
from edgebench.partition.network import DEFAULT_NETWORKS
from edgebench.workloads.lm import LM_10M


def split(network: str = "wifi"):
    return generation_partition("lm_10m", "t", LM_10M.shape, 256, 32, ttft_ms=400.0, ms_per_token=30.0,
                                network=DEFAULT_NETWORKS[network], speedup=10.0, cloud_source="x")  # fmt: skip


def test_shares_add_up_and_attention_grows_with_the_tokens_seen():
    _, blocks, head = unit_shares(LM_10M.shape, 256, 0)
    assert sum(blocks) + head == pytest.approx(1.0)
    assert block_flops(LM_10M.shape, 1, 1000) > block_flops(LM_10M.shape, 1, 10)


def test_each_point_sends_hidden_states_per_token_and_keeps_its_own_blocks_kv_cache():
    s = split()
    assert [p.label for p in (s.points[0], s.points[1], s.points[-1])] == ["cloud only", "after blocks.0",
                                                                          "mobile only"]  # fmt: skip
    total_kv = LM_10M.shape.kv_cache_bytes(256 + 32)
    for p in s.points:
        assert p.kv_cache_device_bytes + p.kv_cache_server_bytes == total_kv
    middle = s.points[3]
    assert middle.prompt_up_bytes == 256 * 384 * 4 and middle.token_up_bytes == 384 * 4
    assert middle.kv_cache_device_bytes == 3 * total_kv // 6
    mobile = s.points[-1]
    assert (mobile.ttft_ms, mobile.ms_per_token) == pytest.approx((400.0, 30.0))  # the trial's own figures
    assert mobile.total_ms == pytest.approx(400 + 31 * 30)
    assert s.best_total == min(s.points, key=lambda p: p.total_ms)


def test_a_hand_over_ships_the_prompt_s_whole_kv_cache_once():
    device_first, server_first = split("3g").hand_overs
    assert device_first.kv_cache_bytes == server_first.kv_cache_bytes == LM_10M.shape.kv_cache_bytes(257)
    assert device_first.ttft_ms == 400.0 and server_first.ms_per_token == 30.0
    assert device_first.kv_transfer_ms == pytest.approx(DEFAULT_NETWORKS["3g"].up_ms(device_first.kv_cache_bytes))
