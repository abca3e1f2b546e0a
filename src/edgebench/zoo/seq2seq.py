"""seq2seq: an LSTM encoder-decoder with Luong attention (the characterization paper's NMT on IWSLT15).

The paper gives 348M parameters and no configuration.  Two layers of 2048 LSTM units in the encoder and the
decoder, 2048-wide embeddings, 32,768-entry source and target vocabularies, Luong's "general" attention and
its attentional layer reproduce it (348.2M): most of the parameters are the embeddings and the output layer.
"""

from __future__ import annotations

import torch
from torch import nn


class Seq2Seq(nn.Module):
    def __init__(self, vocab: int = 32_768, hidden: int = 2048, layers: int = 2) -> None:
        super().__init__()
        self.src_embedding = nn.Embedding(vocab, hidden)
        self.tgt_embedding = nn.Embedding(vocab, hidden)
        self.encoder = nn.LSTM(hidden, hidden, layers, batch_first=True)
        self.decoder = nn.LSTM(hidden, hidden, layers, batch_first=True)
        self.attention = nn.Linear(hidden, hidden, bias=False)  # score(h_t, h_s) = h_t . W h_s
        self.combine = nn.Linear(2 * hidden, hidden)  # attentional vector tanh(W [c_t; h_t])
        self.out = nn.Linear(hidden, vocab)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: ``tgt`` is the reference shifted right; returns ``(batch, tgt_len, vocab)`` logits."""
        memory, state = self.encoder(self.src_embedding(src))
        decoded, _ = self.decoder(self.tgt_embedding(tgt), state)
        weights = torch.softmax(decoded @ self.attention(memory).transpose(1, 2), dim=-1)
        context = weights @ memory
        return self.out(torch.tanh(self.combine(torch.cat([context, decoded], -1))))


def seq2seq(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``seq2seq`` workload (:mod:`edgebench.workloads.seq2seq`)."""
    return Seq2Seq(num_classes)
