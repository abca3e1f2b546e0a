"""The seq2seq workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.seq2seq`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

IWSLT15 = Preset("iwslt15", (50, 50), 32_768, "50-token source and target sentences, 32K-entry vocabularies")


SEQ2SEQ = Workload(
    name="seq2seq",
    domain="language",
    description="LSTM encoder-decoder with attention (2x2048 units, 32K vocabularies), 50-token sentences",
    model="edgebench.zoo.seq2seq:seq2seq",
    input_shape=IWSLT15.input_shape,
    num_classes=IWSLT15.num_classes,
    task="seq2seq",
    optimizer=OptimizerSettings(lr=1.0, momentum=0.0, weight_decay=0.0, schedule="constant"),
    presets=(IWSLT15, Preset("short", (16, 16), 32_768, "16-token sentences")),
    references=(
        Reference("params", 348e6, "chosen configuration (see module)", "characterization paper table II (348M)"),
    ),
)
