"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016); 1.0 is the topology the MNN-based suite trains."""

from __future__ import annotations

import torch
from torch import nn


class Fire(nn.Module):
    def __init__(self, in_channels: int, squeeze: int, expand1x1: int, expand3x3: int) -> None:
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(in_channels, squeeze, 1), nn.ReLU(inplace=True))
        self.expand1x1 = nn.Sequential(nn.Conv2d(squeeze, expand1x1, 1), nn.ReLU(inplace=True))
        self.expand3x3 = nn.Sequential(nn.Conv2d(squeeze, expand3x3, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.squeeze(x)
        return torch.cat([self.expand1x1(x), self.expand3x3(x)], 1)


def _pool() -> nn.MaxPool2d:
    return nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)


class SqueezeNet(nn.Module):
    def __init__(self, version: str = "1.0", num_classes: int = 1000, in_channels: int = 3) -> None:
        super().__init__()
        if version == "1.0":
            layers: list[nn.Module] = [
                nn.Conv2d(in_channels, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True), _pool(),
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), _pool(),
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                _pool(), Fire(512, 64, 256, 256),
            ]  # fmt: skip
        elif version == "1.1":
            layers = [
                nn.Conv2d(in_channels, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True), _pool(),
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), _pool(),
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), _pool(),
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256), Fire(512, 64, 256, 256),
            ]  # fmt: skip
        else:
            raise ValueError(f"SqueezeNet version must be 1.0 or 1.1, not {version!r}")
        self.features = nn.Sequential(*layers)
        final_conv = nn.Conv2d(512, num_classes, kernel_size=1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.5), final_conv, nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1))
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                # The paper's init: the last conv is small so the initial logits are near zero.
                nn.init.normal_(m.weight, 0.0, 0.01) if m is final_conv else nn.init.kaiming_uniform_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(self.classifier(self.features(x)), 1)


def squeezenet(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``squeezenet`` workload (:mod:`edgebench.workloads.squeezenet`)."""
    return SqueezeNet("1.0", num_classes, shape[0])


def squeezenet_1_1(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``squeezenet_1_1`` workload (:mod:`edgebench.workloads.squeezenet`)."""
    return SqueezeNet("1.1", num_classes, shape[0])
