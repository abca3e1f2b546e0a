"""The rnn_ptb workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.rnn_ptb`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

PTB = Preset("ptb", (20,), 10_000, "20 unrolled steps over the 10,000-word Penn Treebank vocabulary")


RNN_PTB_SMALL = Workload(
    name="rnn_ptb_small",
    domain="language",
    description="2-layer LSTM (200 units) word language model, PTB small: 20 steps, 10K words",
    model="edgebench.zoo.rnn_ptb:rnn_ptb_small",
    input_shape=PTB.input_shape,
    num_classes=PTB.num_classes,
    task="language_model",
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
