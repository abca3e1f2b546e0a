"""seq2seq: an LSTM encoder-decoder with Luong attention (the characterization paper's NMT on IWSLT15).

The paper gives 348M parameters and no configuration.  Two layers of 2048 LSTM units in the encoder and the
decoder, 2048-wide embeddings, 32,768-entry source and target vocabularies, Luong's "general" attention and
its attentional layer reproduce it (348.2M): most of the parameters are the embeddings and the output layer.
"""

from __future__ import annotations

import torch
from torch import nn

from edgebench.models.workload import OptimizerSettings, Preset, Reference, Workload

IWSLT15 = Preset("iwslt15", (50, 50), 32_768, "50-token source and target sentences, 32K-entry vocabularies")


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


SEQ2SEQ = Workload(
    name="seq2seq",
    domain="language",
    description="LSTM encoder-decoder with attention (2x2048 units, 32K vocabularies), 50-token sentences",
    build_model=lambda num_classes, shape: Seq2Seq(num_classes),
    input_shape=IWSLT15.input_shape,
    num_classes=IWSLT15.num_classes,
    task="edgebench.tasks.seq2seq:Seq2SeqTask",
    optimizer=OptimizerSettings(lr=1.0, momentum=0.0, weight_decay=0.0, schedule="constant"),
    presets=(IWSLT15, Preset("short", (16, 16), 32_768, "16-token sentences")),
    references=(
        Reference("params", 348e6, "chosen configuration (see module)", "characterization paper table II (348M)"),
    ),
)
