"""DeepSpeech as Mozilla's implementation builds it (after Hannun et al. 2014), trained with CTC.

Each time step sees 26 MFCC features of itself and 9 frames either side (494 inputs); three clipped-ReLU dense
layers, one unidirectional LSTM, one dense layer and a softmax over 29 symbols (a-z, space, apostrophe, blank).
DNNTune lists 29M parameters and 464M multiply-adds for 16 steps ([16, 494] -> [16, 29]), which is this network
with 1600 hidden units (Mozilla's default 2048 would be 47M).
"""

from __future__ import annotations

import torch
from torch import nn


class DeepSpeech(nn.Module):
    def __init__(self, num_symbols: int = 29, features: int = 494, hidden: int = 1600) -> None:
        super().__init__()
        self.dense = nn.Sequential(
            nn.Linear(features, hidden),
            nn.Hardtanh(0.0, 20.0),
            nn.Linear(hidden, hidden),
            nn.Hardtanh(0.0, 20.0),
            nn.Linear(hidden, hidden),
            nn.Hardtanh(0.0, 20.0),
        )
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.h5 = nn.Sequential(nn.Linear(hidden, hidden), nn.Hardtanh(0.0, 20.0))
        self.out = nn.Linear(hidden, num_symbols)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """``(batch, time, 494)`` -> ``(batch, time, symbols)`` logits."""
        out, _ = self.lstm(self.dense(features))
        return self.out(self.h5(out))


def deepspeech(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``deepspeech`` workload (:mod:`edgebench.workloads.deepspeech`)."""
    return DeepSpeech(num_classes, shape[-1])
