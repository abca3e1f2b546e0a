"""The deepspeech workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.deepspeech`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

DNNTUNE = Preset("dnntune", (16, 494), 29, "16 steps of 494 features (26 MFCC x 19 frames), 29 symbols")


DEEPSPEECH = Workload(
    name="deepspeech",
    domain="speech",
    description="DeepSpeech (3 dense, LSTM, dense; 1600 units), CTC over 29 symbols, 16 steps",
    model="edgebench.zoo.deepspeech:deepspeech",
    input_shape=DNNTUNE.input_shape,
    num_classes=DNNTUNE.num_classes,
    task="speech",
    optimizer=OptimizerSettings(lr=1e-4, weight_decay=0.0, schedule="constant", kind="adam"),
    presets=(DNNTUNE, Preset("utterance", (300, 494), 29, "a 3 s utterance: 300 steps of 10 ms")),
    references=(
        Reference("params", 29e6, "1600 hidden units", "DNNTune table 1 (29M)"),
        Reference("forward_macs", 464e6, "16 steps", "DNNTune table 1 (464M)"),
    ),
)
