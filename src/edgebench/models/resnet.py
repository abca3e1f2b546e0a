"""ResNet-50/101/152 (He et al. 2016), bottleneck blocks with the stride on the 3x3 convolution (torchvision's v1.5)."""

from __future__ import annotations

import torch
from torch import nn

from edgebench.models.layers import BatchNorm2d
from edgebench.models.presets import IMAGENET, VISION
from edgebench.models.workload import OptimizerSettings, Reference, Workload

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


def _workload(depth: int, params: int, macs: float, extra: tuple[Reference, ...] = ()) -> Workload:
    return Workload(
        name=f"resnet{depth}",
        domain="vision",
        description=f"ResNet-{depth} (bottleneck, v1.5), ImageNet 3x224x224",
        build_model=lambda num_classes, shape: ResNet(depth, num_classes, shape[0]),
        input_shape=IMAGENET.input_shape,
        num_classes=IMAGENET.num_classes,
        # He et al. use 0.1 at batch 256; 0.01 is that rate scaled to the batch sizes of edge devices (<= 64).
        optimizer=OptimizerSettings(lr=0.01, weight_decay=1e-4, schedule="constant"),
        presets=VISION,
        references=(
            Reference("params", params, "ImageNet head (1000 classes)", f"torchvision resnet{depth}; He 2016"),
            Reference("forward_macs", macs, "224x224", f"torchvision resnet{depth} ({macs / 1e9:.2f} GMACs)"),
            *extra,
        ),
    )


RESNET50 = _workload(
    50,
    25_557_032,
    4.09e9,
    (
        # He et al. count 3.8 G for the original v1 (stride on the 1x1); v1.5 moves it to the 3x3 (+7%).
        Reference("forward_macs", 3.8e9, "224x224, v1 (stride on the 1x1)", "DNNTune table 1; He 2016", rel_tol=0.08),
    ),
)
RESNET101 = _workload(101, 44_549_160, 7.80e9)
RESNET152 = _workload(152, 60_192_808, 11.51e9)
