"""rnn_ptb_small: the 2-layer LSTM word language model of TensorFlow's PTB tutorial, "small" configuration.

200 hidden units, 20 unrolled steps, a 10,000-word vocabulary.  DNNTune's graph takes the embedded input
([20, 200]), so its 2.65M parameters are the two LSTM layers and the softmax; the trained workload here also
learns the 10,000 x 200 embedding (2M more), as the tutorial does.
"""

from __future__ import annotations

import torch
from torch import nn


class RNNLanguageModel(nn.Module):
    def __init__(self, vocab: int = 10_000, hidden: int = 200, layers: int = 2, dropout: float = 0.0) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, layers, batch_first=True, dropout=dropout)
        self.out = nn.Linear(hidden, vocab)
        for p in self.parameters():
            nn.init.uniform_(p, -0.1, 0.1)  # the tutorial's init_scale for the small model

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embedding(tokens))
        return self.out(out)


def rnn_ptb_small(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``rnn_ptb_small`` workload (:mod:`edgebench.workloads.rnn_ptb`)."""
    return RNNLanguageModel(num_classes)
