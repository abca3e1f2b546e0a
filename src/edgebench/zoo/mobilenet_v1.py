"""MobileNet-V1 (Howard et al. 2017), width 1.0: a full convolution, then 13 depthwise-separable blocks."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.zoo.layers import BatchNorm2d

# (output channels, stride) of each depthwise-separable block, table 1 of the paper.
BLOCKS = (
    (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
    (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1),
)  # fmt: skip


def conv_bn(in_ch: int, out_ch: int, kernel: int, stride: int = 1, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, kernel, stride, kernel // 2, groups=groups, bias=False),
        BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
    )


class MobileNetV1(nn.Module):
    def __init__(self, num_classes: int = 1000, in_channels: int = 3, width: float = 1.0) -> None:
        super().__init__()
        channels = int(32 * width)
        layers: list[nn.Module] = [conv_bn(in_channels, channels, 3, 2)]
        for out, stride in BLOCKS:
            out = int(out * width)
            layers += [conv_bn(channels, channels, 3, stride, groups=channels), conv_bn(channels, out, 1)]
            channels = out
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.fc(torch.flatten(x, 1))


def mobilenet_v1(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``mobilenet_v1`` workload (:mod:`edgebench.workloads.mobilenet_v1`)."""
    return MobileNetV1(num_classes, shape[0])
