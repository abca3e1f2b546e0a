"""DenseNet for CIFAR (Huang et al. 2017): three dense blocks of (L - 4) / 3 layers, growth rate k.

The characterization paper trains DenseNet-40 (k=12, ~1M parameters) and DenseNet-100 (k=12, ~7M): the
basic form of the paper's table 2 (3x3 convolutions, no bottleneck, no compression), not DenseNet-BC.
"""

from __future__ import annotations

import torch
from torch import nn

from edgebench.zoo.layers import BatchNorm2d


class DenseLayer(nn.Module):
    def __init__(self, in_ch: int, growth: int) -> None:
        super().__init__()
        self.bn = BatchNorm2d(in_ch)
        self.conv = nn.Conv2d(in_ch, growth, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.conv(torch.relu(self.bn(x)))], 1)


class Transition(nn.Sequential):
    def __init__(self, in_ch: int) -> None:
        super().__init__(BatchNorm2d(in_ch), nn.ReLU(), nn.Conv2d(in_ch, in_ch, 1, bias=False), nn.AvgPool2d(2))


class DenseNet(nn.Module):
    def __init__(self, depth: int = 40, growth: int = 12, num_classes: int = 10, in_channels: int = 3) -> None:
        super().__init__()
        if (depth - 4) % 3:
            raise ValueError(f"DenseNet depth must be 3n + 4, not {depth}")
        per_block = (depth - 4) // 3
        channels = 16
        layers: list[nn.Module] = [nn.Conv2d(in_channels, channels, 3, padding=1, bias=False)]
        for block in range(3):
            for _ in range(per_block):
                layers.append(DenseLayer(channels, growth))
                channels += growth
            if block < 2:
                layers.append(Transition(channels))
        layers += [BatchNorm2d(channels), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(channels, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.fc(torch.flatten(x, 1))


def densenet40(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``densenet40`` workload (:mod:`edgebench.workloads.densenet`)."""
    return DenseNet(40, 12, num_classes, shape[0])


def densenet100(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``densenet100`` workload (:mod:`edgebench.workloads.densenet`)."""
    return DenseNet(100, 12, num_classes, shape[0])
