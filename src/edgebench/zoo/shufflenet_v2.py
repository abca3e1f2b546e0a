"""ShuffleNet-V2 (Ma et al. 2018): channel split, two branches, channel shuffle; the 0.5x width."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.zoo.layers import BatchNorm2d

STAGE_REPEATS = (4, 8, 4)
#: Output channels of conv1, stages 2-4 and conv5 for each width (table 5 of the paper).
WIDTHS = {0.5: (24, 48, 96, 192, 1024), 1.0: (24, 116, 232, 464, 1024)}


def channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    b, c, h, w = x.shape
    return x.view(b, groups, c // groups, h, w).transpose(1, 2).reshape(b, c, h, w)


def _pointwise(in_ch: int, out_ch: int) -> list[nn.Module]:
    return [nn.Conv2d(in_ch, out_ch, 1, bias=False), BatchNorm2d(out_ch), nn.ReLU(inplace=True)]


def _depthwise(ch: int, stride: int) -> list[nn.Module]:
    return [nn.Conv2d(ch, ch, 3, stride, 1, groups=ch, bias=False), BatchNorm2d(ch)]


class ShuffleUnit(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, stride: int) -> None:
        super().__init__()
        self.stride = stride
        half = out_ch // 2
        self.branch1 = (
            nn.Sequential(*_depthwise(in_ch, stride), *_pointwise(in_ch, half)) if stride > 1 else nn.Identity()
        )
        branch_in = in_ch if stride > 1 else half
        self.branch2 = nn.Sequential(*_pointwise(branch_in, half), *_depthwise(half, stride), *_pointwise(half, half))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), 1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), 1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, width: float = 0.5, num_classes: int = 1000, in_channels: int = 3) -> None:
        super().__init__()
        c1, *stages, c5 = WIDTHS[width]
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, c1, 3, 2, 1, bias=False),
            BatchNorm2d(c1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
        )
        units: list[nn.Module] = []
        channels = c1
        for repeats, out in zip(STAGE_REPEATS, stages, strict=True):
            units += [ShuffleUnit(channels, out, 2)] + [ShuffleUnit(out, out, 1) for _ in range(repeats - 1)]
            channels = out
        self.stages = nn.Sequential(*units)
        self.conv5 = nn.Sequential(*_pointwise(channels, c5))
        self.fc = nn.Linear(c5, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv5(self.stages(self.stem(x)))
        return self.fc(x.mean((2, 3)))


def shufflenet_v2_05x(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``shufflenet_v2_05x`` workload (:mod:`edgebench.workloads.shufflenet_v2`)."""
    return ShuffleNetV2(0.5, num_classes, shape[0])
