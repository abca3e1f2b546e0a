"""VGG16 and VGG19 (Simonyan and Zisserman 2015, configurations D and E), without batch norm, as in torchvision."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.models.presets import CIFAR10, IMAGENET, VISION
from edgebench.models.workload import OptimizerSettings, Reference, Workload

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


def _workload(depth: int, config: str, references: tuple[Reference, ...]) -> Workload:
    return Workload(
        name=f"vgg{depth}",
        domain="vision",
        description=f"VGG{depth} (configuration {config}), ImageNet 3x224x224",
        build_model=lambda num_classes, shape: VGG(depth, num_classes, shape[0]),
        input_shape=IMAGENET.input_shape,
        num_classes=IMAGENET.num_classes,
        optimizer=OptimizerSettings(lr=0.01, weight_decay=5e-4, schedule="constant"),
        presets=VISION,
        references=references,
    )


VGG16 = _workload(
    16,
    "D",
    (
        Reference("params", 138_357_544, "ImageNet head (1000 classes)", "torchvision vgg16; Simonyan 2015: 138M"),
        Reference("forward_macs", 16e9, "224x224, 1000 classes", "DNNTune table 1 (16 G)", "imagenet", rel_tol=0.04),
        Reference("params", 134e6, "CIFAR-10 head", "characterization paper table II (134M)", CIFAR10.name),
    ),
)
VGG19 = _workload(
    19,
    "E",
    (
        Reference("params", 143_667_240, "ImageNet head (1000 classes)", "torchvision vgg19; Simonyan 2015: 144M"),
        Reference("forward_macs", 19.6e9, "224x224", "Simonyan 2015 / torchvision (19.63 GMACs)"),
    ),
)
