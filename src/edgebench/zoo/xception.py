"""Xception (Chollet 2017) as in Keras applications: entry, 8 middle blocks of separable convolutions, exit."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.zoo.layers import BatchNorm2d


class SeparableConv(nn.Sequential):
    """Depthwise 3x3 then pointwise 1x1, both without bias, then batch norm (Keras SeparableConv2D + BN)."""

    def __init__(self, in_ch: int, out_ch: int) -> None:
        super().__init__(
            nn.Conv2d(in_ch, in_ch, 3, padding=1, groups=in_ch, bias=False),
            nn.Conv2d(in_ch, out_ch, 1, bias=False),
            BatchNorm2d(out_ch),
        )


class Block(nn.Module):
    """``reps`` x (ReLU, separable conv, BN), a 3x3/2 max pool when it downsamples, plus a (projected) shortcut."""

    def __init__(self, in_ch: int, out_ch: int, reps: int, stride: int, relu_first: bool = True) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        channels = in_ch
        for i in range(reps):
            # Entry and exit blocks widen on their first conv except the exit block, which widens on its last.
            target = out_ch if (i == 0 and out_ch != 1024) or i == reps - 1 else channels
            if i > 0 or relu_first:
                layers.append(nn.ReLU(inplace=False))
            layers.append(SeparableConv(channels, target))
            channels = target
        if stride > 1:
            layers.append(nn.MaxPool2d(3, stride, 1))
        self.body = nn.Sequential(*layers)
        self.skip: nn.Module = nn.Identity()
        if stride > 1 or in_ch != out_ch:
            self.skip = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride, bias=False), BatchNorm2d(out_ch))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x) + self.skip(x)


class Xception(nn.Module):
    def __init__(self, num_classes: int = 1000, in_channels: int = 3) -> None:
        super().__init__()

        def conv_bn(i: int, o: int, stride: int) -> list[nn.Module]:
            return [nn.Conv2d(i, o, 3, stride, bias=False), BatchNorm2d(o), nn.ReLU(inplace=True)]

        self.entry = nn.Sequential(
            *conv_bn(in_channels, 32, 2),
            *conv_bn(32, 64, 1),
            Block(64, 128, 2, 2, relu_first=False),
            Block(128, 256, 2, 2),
            Block(256, 728, 2, 2),
        )
        self.middle = nn.Sequential(*(Block(728, 728, 3, 1) for _ in range(8)))
        self.exit = nn.Sequential(
            Block(728, 1024, 2, 2),
            SeparableConv(1024, 1536),
            nn.ReLU(inplace=True),
            SeparableConv(1536, 2048),
            nn.ReLU(inplace=True),
        )
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.exit(self.middle(self.entry(x)))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def xception(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``xception`` workload (:mod:`edgebench.workloads.xception`)."""
    return Xception(num_classes, shape[0])
