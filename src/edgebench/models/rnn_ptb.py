"""rnn_ptb_small: the 2-layer LSTM word language model of TensorFlow's PTB tutorial, "small" configuration.

200 hidden units, 20 unrolled steps, a 10,000-word vocabulary.  DNNTune's graph takes the embedded input
([20, 200]), so its 2.65M parameters are the two LSTM layers and the softmax; the trained workload here also
learns the 10,000 x 200 embedding (2M more), as the tutorial does.
"""

from __future__ import annotations

import torch
from torch import nn

from edgebench.models.workload import OptimizerSettings, Preset, Reference, Workload

PTB = Preset("ptb", (20,), 10_000, "20 unrolled steps over the 10,000-word Penn Treebank vocabulary")


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


RNN_PTB_SMALL = Workload(
    name="rnn_ptb_small",
    domain="language",
    description="2-layer LSTM (200 units) word language model, PTB small: 20 steps, 10K words",
    build_model=lambda num_classes, shape: RNNLanguageModel(num_classes),
    input_shape=PTB.input_shape,
    num_classes=PTB.num_classes,
    task="edgebench.tasks.language_model:LanguageModelTask",
    optimizer=OptimizerSettings(lr=1.0, momentum=0.0, weight_decay=0.0, schedule="constant"),
    presets=(PTB, Preset("shakespeare", (100,), 65, "100-character windows of Shakespeare")),
    references=(
        Reference(
            "params",
            2.65e6,
            "2 LSTM layers + softmax; the 10K x 200 input embedding is outside DNNTune's graph",
            "DNNTune table 1 (2.65M)",
            excludes=("embedding.",),
        ),
    ),
)
