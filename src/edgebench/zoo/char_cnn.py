"""Char-CNN: a character-level language model with a convolution under an LSTM (the characterization paper).

Characters are embedded, a causal 1-D convolution mixes each position with the characters before it (never
after, so the model cannot see what it is asked to predict), an LSTM carries the context, and a linear layer
predicts the next character.  Sized to the paper's ~1M parameters for a 65-character alphabet.
"""

from __future__ import annotations

import torch
from torch import nn


class CharCNN(nn.Module):
    def __init__(self, vocab: int = 65, embed: int = 64, channels: int = 256, kernel: int = 3, hidden: int = 384):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.pad = kernel - 1
        self.conv = nn.Conv1d(embed, channels, kernel)
        self.lstm = nn.LSTM(channels, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``(batch, time)`` character ids -> ``(batch, time, vocab)`` logits of the next character."""
        x = self.embedding(tokens).transpose(1, 2)
        x = torch.relu(self.conv(nn.functional.pad(x, (self.pad, 0))))
        out, _ = self.lstm(x.transpose(1, 2))
        return self.out(out)


def char_cnn(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``char_cnn`` workload (:mod:`edgebench.workloads.char_cnn`)."""
    return CharCNN(num_classes)
