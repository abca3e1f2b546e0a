"""MobileNetV2 (Sandler et al. 2018), width 1.0, with ReLU6 in place as published.

The MNN-based suite trains it with 1001 classes (TensorFlow's ImageNet head with a background class) and a
constant learning rate of 1e-5 with weight decay 4e-5.
"""

from __future__ import annotations

import torch
from torch import nn

from edgebench.zoo.layers import BatchNorm2d


def _make_divisible(value: float, divisor: int = 8) -> int:
    new = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * value else new


class ConvBNReLU(nn.Sequential):
    def __init__(
        self, in_ch: int, out_ch: int, kernel: int = 3, stride: int = 1, groups: int = 1, dilation: int = 1
    ) -> None:
        padding = dilation * (kernel - 1) // 2
        super().__init__(
            nn.Conv2d(in_ch, out_ch, kernel, stride, padding, dilation, groups=groups, bias=False),
            BatchNorm2d(out_ch),
            nn.ReLU6(inplace=True),
        )


class InvertedResidual(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, stride: int, expand_ratio: int, dilation: int = 1) -> None:
        super().__init__()
        hidden = round(in_ch * expand_ratio)
        self.use_residual = stride == 1 and in_ch == out_ch
        layers: list[nn.Module] = [] if expand_ratio == 1 else [ConvBNReLU(in_ch, hidden, kernel=1)]
        layers += [
            ConvBNReLU(hidden, hidden, stride=stride, groups=hidden, dilation=dilation),
            nn.Conv2d(hidden, out_ch, 1, bias=False),
            BatchNorm2d(out_ch),
        ]
        self.conv = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv(x) if self.use_residual else self.conv(x)


class MobileNetV2(nn.Module):
    # expansion t, channels c, repeats n, stride s (table 2 of the paper)
    SETTINGS = (
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    )

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0, in_channels: int = 3) -> None:
        super().__init__()
        in_ch = _make_divisible(32 * width_mult)
        last = _make_divisible(1280 * max(1.0, width_mult))
        features: list[nn.Module] = [ConvBNReLU(in_channels, in_ch, stride=2)]
        for t, c, n, s in self.SETTINGS:
            out_ch = _make_divisible(c * width_mult)
            for i in range(n):
                features.append(InvertedResidual(in_ch, out_ch, s if i == 0 else 1, t))
                in_ch = out_ch
        features.append(ConvBNReLU(in_ch, last, kernel=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def mobilenet_v2(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``mobilenet_v2`` workload (:mod:`edgebench.workloads.mobilenet_v2`)."""
    return MobileNetV2(num_classes, 1.0, shape[0])
