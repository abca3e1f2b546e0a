"""DQN with the Atari network of Mnih et al. (Nature 2015): 4 stacked 84x84 frames in, one Q-value per action.

Three convolutions (32 8x8/4, 64 4x4/2, 64 3x3/1), a 512-unit layer and the action values; 1.69M parameters
for the full 18-action set.  The training step is a TD update against a target network on a replay batch.
"""

from __future__ import annotations

import torch
from torch import nn


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


def dqn(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``dqn`` workload (:mod:`edgebench.workloads.dqn`)."""
    return AtariQNetwork(num_classes, shape[0], shape[-1])
