"""mnist_mlp: DNNTune's "big MLP" on flattened MNIST digits (784 -> 10, 5 layers, 13.9M parameters).

DNNTune gives only its size: four hidden layers of 2024 ReLU units reproduce the 13.9M parameters and the
13.9M multiply-adds per digit.
"""

from __future__ import annotations

import math
from itertools import pairwise

import torch
from torch import nn

from edgebench.models.workload import Preset, Reference, Workload

MNIST_FLAT = Preset("mnist", (784,), 10, "MNIST digits flattened to 784 values, 10 classes")


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


MNIST_MLP = Workload(
    name="mnist_mlp",
    domain="mlp",
    description="MLP 784-2024x4-10 on MNIST",
    build_model=lambda num_classes, shape: MLP(math.prod(shape), num_classes),
    input_shape=MNIST_FLAT.input_shape,
    num_classes=MNIST_FLAT.num_classes,
    presets=(MNIST_FLAT,),
    references=(
        Reference("params", 13.9e6, "784-2024x4-10 (see module)", "DNNTune table 1 (13.9M)"),
        Reference("forward_macs", 13.9e6, "one digit", "DNNTune table 1 (13.9M)"),
    ),
)
