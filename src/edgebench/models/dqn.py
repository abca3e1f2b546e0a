"""DQN with the Atari network of Mnih et al. (Nature 2015): 4 stacked 84x84 frames in, one Q-value per action.

Three convolutions (32 8x8/4, 64 4x4/2, 64 3x3/1), a 512-unit layer and the action values; 1.69M parameters
for the full 18-action set.  The training step is a TD update against a target network on a replay batch.
"""

from __future__ import annotations

import torch
from torch import nn

from edgebench.models.workload import OptimizerSettings, Preset, Reference, Workload

ATARI = Preset("atari", (4, 84, 84), 18, "4 stacked 84x84 grey frames, the full 18-action set")


class AtariQNetwork(nn.Module):
    def __init__(self, actions: int = 18, frames: int = 4, size: int = 84) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(frames, 32, 8, 4),
            nn.ReLU(inplace=True),
            nn.Conv2d(32, 64, 4, 2),
            nn.ReLU(inplace=True),
            nn.Conv2d(64, 64, 3, 1),
            nn.ReLU(inplace=True),
            nn.Flatten(),
        )
        with torch.no_grad():
            flat = self.features(torch.zeros(1, frames, size, size)).shape[1]
        self.head = nn.Sequential(nn.Linear(flat, 512), nn.ReLU(inplace=True), nn.Linear(512, actions))

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(frames))


DQN = Workload(
    name="dqn",
    domain="reinforcement learning",
    description="DQN Atari network, 4x84x84 frames, 18 actions, TD loss on replay batches",
    build_model=lambda num_classes, shape: AtariQNetwork(num_classes, shape[0], shape[-1]),
    input_shape=ATARI.input_shape,
    num_classes=ATARI.num_classes,
    task="edgebench.tasks.dqn:DQNTask",
    # Mnih 2015: RMSProp, lr 0.00025, min squared gradient 0.01.
    optimizer=OptimizerSettings(lr=2.5e-4, momentum=0.0, weight_decay=0.0, schedule="constant", kind="rmsprop",
                                eps=0.01),
    presets=(ATARI, Preset("atari_minimal", (4, 84, 84), 4, "a game with 4 actions (Breakout)")),
    references=(
        Reference("params", 1.7e6, "18 actions", "characterization paper (~1.7M); Mnih 2015 network", rel_tol=0.02),
    ),
)  # fmt: skip
