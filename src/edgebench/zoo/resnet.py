"""ResNet-50/101/152 (He et al. 2016), bottleneck blocks with the stride on the 3x3 convolution (torchvision's v1.5)."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.zoo.layers import BatchNorm2d

BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_ch: int, width: int, stride: int = 1) -> None:
        super().__init__()
        out_ch = width * self.expansion
        self.conv1 = nn.Conv2d(in_ch, width, 1, bias=False)
        self.bn1 = BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_ch, 1, bias=False)
        self.bn3 = BatchNorm2d(out_ch)
        self.relu = nn.ReLU(inplace=True)
        self.downsample: nn.Module | None = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride, bias=False), BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


class ResNet(nn.Module):
    def __init__(self, depth: int = 50, num_classes: int = 1000, in_channels: int = 3) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, 64, 7, 2, 3, bias=False),
            BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
        )
        stages: list[nn.Module] = []
        in_ch = 64
        for i, (n, width) in enumerate(zip(BLOCKS[depth], (64, 128, 256, 512), strict=True)):
            blocks = []
            for j in range(n):
                blocks.append(Bottleneck(in_ch, width, 2 if j == 0 and i > 0 else 1))
                in_ch = width * Bottleneck.expansion
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(in_ch, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def resnet50(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``resnet50`` workload (:mod:`edgebench.workloads.resnet`)."""
    return ResNet(50, num_classes, shape[0])


def resnet101(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``resnet101`` workload (:mod:`edgebench.workloads.resnet`)."""
    return ResNet(101, num_classes, shape[0])


def resnet152(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``resnet152`` workload (:mod:`edgebench.workloads.resnet`)."""
    return ResNet(152, num_classes, shape[0])
