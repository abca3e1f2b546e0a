"""Transformer (Vaswani et al. 2017), the base configuration, as DNNTune lists it (49M parameters, [1,7] -> [1,14]).

Six encoder and six decoder layers of width 512, 8 heads, 2048-wide feed-forward, sinusoidal positions.  The base
model's 65M comes with a 37K vocabulary; DNNTune's 49M fits a 10,000-entry vocabulary shared by source, target
and output layer (tied weights): 44.1M of layers plus 5.1M of embedding.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def sinusoid(length: int, width: int) -> torch.Tensor:
    position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    rate = torch.exp(torch.arange(0, width, 2, dtype=torch.float32) * (-math.log(10000.0) / width))
    table = torch.zeros(length, width)
    table[:, 0::2], table[:, 1::2] = torch.sin(position * rate), torch.cos(position * rate)
    return table


class Transformer(nn.Module):
    def __init__(self, vocab: int = 10_000, width: int = 512, heads: int = 8, layers: int = 6, ff: int = 2048):
        super().__init__()
        self.width = width
        self.embedding = nn.Embedding(vocab, width)
        self.register_buffer("positions", sinusoid(1024, width), persistent=False)
        self.core = nn.Transformer(width, heads, layers, layers, ff, dropout=0.1, batch_first=True)
        nn.init.normal_(self.embedding.weight, 0.0, width**-0.5)  # tied with the output layer: logits start near 0

    def _embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.embedding(tokens) * math.sqrt(self.width) + self.positions[: tokens.shape[1]]

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Teacher forcing with a causal mask on the target; output logits share the embedding's weights."""
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], device=tgt.device)
        hidden = self.core(self._embed(src), self._embed(tgt), tgt_mask=causal, tgt_is_causal=True)
        return hidden @ self.embedding.weight.T


def transformer(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``transformer`` workload (:mod:`edgebench.workloads.transformer`)."""
    return Transformer(num_classes)
