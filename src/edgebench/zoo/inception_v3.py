"""Inception-V3 (Szegedy et al. 2016) in torchvision's layout, with batch norm, without the auxiliary classifier."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.zoo.layers import BatchNorm2d

KernelSize = int | tuple[int, int]


class Conv(nn.Sequential):
    def __init__(self, in_ch: int, out_ch: int, kernel: KernelSize, stride: int = 1, padding: KernelSize = 0) -> None:
        super().__init__(
            nn.Conv2d(in_ch, out_ch, kernel, stride, padding, bias=False),
            BatchNorm2d(out_ch, eps=0.001),
            nn.ReLU(inplace=True),
        )


class Branches(nn.Module):
    """Runs every branch on the same input and concatenates their outputs on the channel axis."""

    def __init__(self, *branches: nn.Module) -> None:
        super().__init__()
        self.branches = nn.ModuleList(branches)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([b(x) for b in self.branches], 1)


def _pool_conv(in_ch: int, out_ch: int) -> nn.Sequential:
    return nn.Sequential(nn.AvgPool2d(3, 1, 1), Conv(in_ch, out_ch, 1))


def inception_a(in_ch: int, pool: int) -> Branches:
    return Branches(
        Conv(in_ch, 64, 1),
        nn.Sequential(Conv(in_ch, 48, 1), Conv(48, 64, 5, padding=2)),
        nn.Sequential(Conv(in_ch, 64, 1), Conv(64, 96, 3, padding=1), Conv(96, 96, 3, padding=1)),
        _pool_conv(in_ch, pool),
    )


def inception_b(in_ch: int) -> Branches:
    return Branches(
        Conv(in_ch, 384, 3, 2),
        nn.Sequential(Conv(in_ch, 64, 1), Conv(64, 96, 3, padding=1), Conv(96, 96, 3, 2)),
        nn.MaxPool2d(3, 2),
    )


def _seven(c_in: int, c_out: int, first_wide: bool) -> list[nn.Module]:
    """A 1x7 then 7x1 factorised pair (7x1 first when ``first_wide`` is False)."""
    a, b = ((1, 7), (0, 3)), ((7, 1), (3, 0))
    (k1, p1), (k2, p2) = (a, b) if first_wide else (b, a)
    return [Conv(c_in, c_in, k1, padding=p1), Conv(c_in, c_out, k2, padding=p2)]


def inception_c(in_ch: int, c7: int) -> Branches:
    return Branches(
        Conv(in_ch, 192, 1),
        nn.Sequential(Conv(in_ch, c7, 1), *_seven(c7, 192, True)),
        nn.Sequential(Conv(in_ch, c7, 1), *_seven(c7, c7, False), *_seven(c7, 192, False)),
        _pool_conv(in_ch, 192),
    )


def inception_d(in_ch: int) -> Branches:
    return Branches(
        nn.Sequential(Conv(in_ch, 192, 1), Conv(192, 320, 3, 2)),
        nn.Sequential(Conv(in_ch, 192, 1), *_seven(192, 192, True), Conv(192, 192, 3, 2)),
        nn.MaxPool2d(3, 2),
    )


class InceptionE(nn.Module):
    def __init__(self, in_ch: int) -> None:
        super().__init__()
        self.b1 = Conv(in_ch, 320, 1)
        self.b3 = Conv(in_ch, 384, 1)
        self.b3a, self.b3b = Conv(384, 384, (1, 3), padding=(0, 1)), Conv(384, 384, (3, 1), padding=(1, 0))
        self.dbl = nn.Sequential(Conv(in_ch, 448, 1), Conv(448, 384, 3, padding=1))
        self.dbla, self.dblb = Conv(384, 384, (1, 3), padding=(0, 1)), Conv(384, 384, (3, 1), padding=(1, 0))
        self.pool = _pool_conv(in_ch, 192)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b3, dbl = self.b3(x), self.dbl(x)
        return torch.cat(
            [self.b1(x), self.b3a(b3), self.b3b(b3), self.dbla(dbl), self.dblb(dbl), self.pool(x)],
            1,
        )


class InceptionV3(nn.Module):
    def __init__(self, num_classes: int = 1000, in_channels: int = 3) -> None:
        super().__init__()
        self.features = nn.Sequential(
            Conv(in_channels, 32, 3, 2),
            Conv(32, 32, 3),
            Conv(32, 64, 3, padding=1),
            nn.MaxPool2d(3, 2),
            Conv(64, 80, 1),
            Conv(80, 192, 3),
            nn.MaxPool2d(3, 2),
            inception_a(192, 32),
            inception_a(256, 64),
            inception_a(288, 64),
            inception_b(288),
            inception_c(768, 128),
            inception_c(768, 160),
            inception_c(768, 160),
            inception_c(768, 192),
            inception_d(768),
            InceptionE(1280),
            InceptionE(2048),
        )
        self.dropout = nn.Dropout(0.5)
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1)
        return self.fc(self.dropout(x))


def inception_v3(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``inception_v3`` workload (:mod:`edgebench.workloads.inception_v3`)."""
    return InceptionV3(num_classes, shape[0])
