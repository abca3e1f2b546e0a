"""mnist_mlp: DNNTune's "big MLP" on flattened MNIST digits (784 -> 10, 5 layers, 13.9M parameters).

DNNTune gives only its size: four hidden layers of 2024 ReLU units reproduce the 13.9M parameters and the
13.9M multiply-adds per digit.
"""

from __future__ import annotations

import math
from itertools import pairwise

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self, inputs: int = 784, num_classes: int = 10, hidden: int = 2024, layers: int = 4) -> None:
        super().__init__()
        dims = [inputs] + [hidden] * layers
        blocks: list[nn.Module] = []
        for a, b in pairwise(dims):
            blocks += [nn.Linear(a, b), nn.ReLU(inplace=True)]
        self.net = nn.Sequential(nn.Flatten(), *blocks, nn.Linear(dims[-1], num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def mnist_mlp(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``mnist_mlp`` workload (:mod:`edgebench.workloads.mlp`)."""
    return MLP(math.prod(shape), num_classes)
