"""DeepSpeech as Mozilla's implementation builds it (after Hannun et al. 2014), trained with CTC.

Each time step sees 26 MFCC features of itself and 9 frames either side (494 inputs); three clipped-ReLU dense
layers, one unidirectional LSTM, one dense layer and a softmax over 29 symbols (a-z, space, apostrophe, blank).
DNNTune lists 29M parameters and 464M multiply-adds for 16 steps ([16, 494] -> [16, 29]), which is this network
with 1600 hidden units (Mozilla's default 2048 would be 47M).
"""

from __future__ import annotations

import torch
from torch import nn

from edgebench.models.workload import OptimizerSettings, Preset, Reference, Workload

DNNTUNE = Preset("dnntune", (16, 494), 29, "16 steps of 494 features (26 MFCC x 19 frames), 29 symbols")


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


DEEPSPEECH = Workload(
    name="deepspeech",
    domain="speech",
    description="DeepSpeech (3 dense, LSTM, dense; 1600 units), CTC over 29 symbols, 16 steps",
    build_model=lambda num_classes, shape: DeepSpeech(num_classes, shape[-1]),
    input_shape=DNNTUNE.input_shape,
    num_classes=DNNTUNE.num_classes,
    task="edgebench.tasks.speech:CTCTask",
    optimizer=OptimizerSettings(lr=1e-4, weight_decay=0.0, schedule="constant", kind="adam"),
    presets=(DNNTUNE, Preset("utterance", (300, 494), 29, "a 3 s utterance: 300 steps of 10 ms")),
    references=(
        Reference("params", 29e6, "1600 hidden units", "DNNTune table 1 (29M)"),
        Reference("forward_macs", 464e6, "16 steps", "DNNTune table 1 (464M)"),
    ),
)
