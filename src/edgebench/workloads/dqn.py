"""The dqn workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.dqn`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

ATARI = Preset("atari", (4, 84, 84), 18, "4 stacked 84x84 grey frames, the full 18-action set")


DQN = Workload(
    name="dqn",
    domain="reinforcement learning",
    description="DQN Atari network, 4x84x84 frames, 18 actions, TD loss on replay batches",
    model="edgebench.zoo.dqn:dqn",
    input_shape=ATARI.input_shape,
    num_classes=ATARI.num_classes,
    task="dqn",
    # Mnih 2015: RMSProp, lr 0.00025, min squared gradient 0.01.
    optimizer=OptimizerSettings(lr=2.5e-4, momentum=0.0, weight_decay=0.0, schedule="constant", kind="rmsprop",
                                eps=0.01),
    presets=(ATARI, Preset("atari_minimal", (4, 84, 84), 4, "a game with 4 actions (Breakout)")),
    references=(
        Reference("params", 1.7e6, "18 actions", "characterization paper (~1.7M); Mnih 2015 network", rel_tol=0.02),
    ),
)  # fmt: skip
