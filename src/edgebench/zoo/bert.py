"""BERT-base (Devlin et al. 2019) with its masked-language-model head: 12 layers, 768 wide, 12 heads, 30,522 words.

Post-norm encoder layers with GELU as published; the output layer shares the word embedding's weights.  As in
the original implementation, the MLM head runs only on the masked positions of each sequence.
"""

from __future__ import annotations

import torch
from torch import nn


class Bert(nn.Module):
    def __init__(
        self, vocab: int = 30_522, width: int = 768, layers: int = 12, heads: int = 12, ff: int = 3072
    ) -> None:
        super().__init__()
        self.word = nn.Embedding(vocab, width)
        self.position = nn.Embedding(512, width)
        self.token_type = nn.Embedding(2, width)
        self.embed_norm = nn.LayerNorm(width, eps=1e-12)
        layer = nn.TransformerEncoderLayer(width, heads, ff, 0.1, "gelu", 1e-12, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.mlm_transform = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width, eps=1e-12))
        self.mlm_bias = nn.Parameter(torch.zeros(vocab))
        self.dropout = nn.Dropout(0.1)
        for m in self.modules():  # BERT's initializer: N(0, 0.02) for every weight matrix and embedding
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)

    def forward(self, tokens: torch.Tensor, masked_positions: torch.Tensor | None = None) -> torch.Tensor:
        """Logits over the vocabulary at ``masked_positions`` ``(batch, n)``, or at every position if None."""
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.word(tokens) + self.position(positions) + self.token_type(torch.zeros_like(tokens))
        hidden = self.encoder(self.dropout(self.embed_norm(x)))
        if masked_positions is not None:
            index = masked_positions.unsqueeze(-1).expand(-1, -1, hidden.shape[-1])
            hidden = hidden.gather(1, index)
        return self.mlm_transform(hidden) @ self.word.weight.T + self.mlm_bias


def bert_base(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``bert_base`` workload (:mod:`edgebench.workloads.bert`)."""
    return Bert(num_classes)
