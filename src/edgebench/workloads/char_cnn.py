"""The char_cnn workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.char_cnn`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

SHAKESPEARE = Preset("shakespeare", (100,), 65, "100-character windows of Shakespeare, 65-symbol alphabet")


CHAR_CNN = Workload(
    name="char_cnn",
    domain="language",
    description="character-level CNN + LSTM language model, 100-character windows",
    model="edgebench.zoo.char_cnn:char_cnn",
    input_shape=SHAKESPEARE.input_shape,
    num_classes=SHAKESPEARE.num_classes,
    task="language_model",
    optimizer=OptimizerSettings(lr=2e-3, weight_decay=0.0, schedule="constant", kind="adam"),
    presets=(SHAKESPEARE, Preset("long", (256,), 65, "256-character windows")),
    references=(Reference("params", 1e6, "65 characters", "characterization paper table II (~1M)", rel_tol=0.1),),
)
