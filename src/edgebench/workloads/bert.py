"""The bert workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.bert`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

SQUAD = Preset("squad", (384,), 30_522, "384-token sequences (SQuAD fine-tuning length), WordPiece vocabulary")


BERT_BASE = Workload(
    name="bert_base",
    domain="language",
    description="BERT-base with the masked-LM head, 384-token sequences",
    model="edgebench.zoo.bert:bert_base",
    input_shape=SQUAD.input_shape,
    num_classes=SQUAD.num_classes,
    task="masked_lm",
    optimizer=OptimizerSettings(lr=1e-4, weight_decay=0.01, schedule="constant", kind="adamw", eps=1e-6),
    presets=(SQUAD, Preset("seq128", (128,), 30_522, "128-token sequences (pre-training phase 1)")),
    references=(Reference("params", 110e6, "BERT-base", "Devlin 2019 (110M); characterization paper table II"),),
)
