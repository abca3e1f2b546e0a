"""VGG16 and VGG19 (Simonyan and Zisserman 2015, configurations D and E), without batch norm, as in torchvision."""

from __future__ import annotations

import torch
from torch import nn

CONFIGS = {
    16: (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"),
    19: (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"),
}


class VGG(nn.Module):
    def __init__(self, depth: int = 16, num_classes: int = 1000, in_channels: int = 3) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        channels = in_channels
        for v in CONFIGS[depth]:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(channels, int(v), 3, padding=1), nn.ReLU(inplace=True)]
                channels = int(v)
        self.features = nn.Sequential(*layers)
        # torchvision's head: a 7x7 grid whatever the input, so a 32x32 CIFAR image keeps the 138M parameters.
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(0.5),
            nn.Linear(4096, num_classes),
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def vgg16(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``vgg16`` workload (:mod:`edgebench.workloads.vgg`)."""
    return VGG(16, num_classes, shape[0])


def vgg19(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``vgg19`` workload (:mod:`edgebench.workloads.vgg`)."""
    return VGG(19, num_classes, shape[0])
