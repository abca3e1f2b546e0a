"""The transformer workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.transformer`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

DNNTUNE = Preset("dnntune", (7, 14), 10_000, "7-token source, 14-token target (DNNTune's shapes), 10K vocabulary")


TRANSFORMER = Workload(
    name="transformer",
    domain="language",
    description="Transformer base (6+6 layers, 512 wide), shared 10K vocabulary, 7 -> 14 tokens",
    model="edgebench.zoo.transformer:transformer",
    input_shape=DNNTUNE.input_shape,
    num_classes=DNNTUNE.num_classes,
    task="seq2seq",
    optimizer=OptimizerSettings(lr=1e-4, weight_decay=0.0, schedule="constant", kind="adam", betas=(0.9, 0.98)),
    presets=(DNNTUNE, Preset("wmt", (64, 64), 10_000, "64-token sentences")),
    references=(Reference("params", 49e6, "shared 10K vocabulary (see module)", "DNNTune table 1 (49M)"),),
)
