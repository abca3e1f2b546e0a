"""AlexNet (Krizhevsky et al. 2012), single-tower form as in torchvision and the One weird trick paper."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.models.presets import IMAGENET, MNN
from edgebench.models.workload import Preset, Reference, Workload


class AlexNet(nn.Module):
    def __init__(self, num_classes: int = 1000, in_channels: int = 3, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 64, kernel_size=11, stride=4, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(256 * 6 * 6, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


ALEXNET = Workload(
    name="alexnet",
    domain="vision",
    description="AlexNet, 3x224x224, 10 classes as in the MNN-based suite",
    build_model=lambda num_classes, shape: AlexNet(num_classes, shape[0]),
    input_shape=(3, 224, 224),
    num_classes=10,
    # Three 3x3/2 max pools after a stride-4 convolution need at least 63x63: CIFAR-10 images are upscaled.
    presets=(MNN, IMAGENET, Preset("cifar10", (3, 64, 64), 10, "CIFAR-10 upscaled to 64x64, the least AlexNet takes")),
    references=(
        Reference(
            "params", 61_100_840, "ImageNet head (1000 classes)", "torchvision alexnet; Krizhevsky 2014", "imagenet"
        ),
        Reference("forward_macs", 714e6, "224x224, 1000 classes", "torchvision alexnet (0.71 GMACs)", "imagenet"),
    ),
)
