"""DeepLab-V3 with a MobileNet-V2 backbone (Sandler et al. 2018, section 6.3; TensorFlow's deeplab model zoo).

This is the configuration DNNTune lists (2.1M parameters, input 513x513x3, output 65x65x21): MobileNetV2 up to
its last inverted residual (320 channels) at output stride 8, the later stages dilated instead of strided, and
the reduced head the paper calls Mobile DeepLabv3: image pooling and a 1x1 branch (no atrous convolutions),
a 1x1 projection and the per-pixel logits.  The loss upsamples the logits to the label size.

DNNTune's 17.8 G for it counts 2 FLOPs per multiply-add (8.8 G MACs here), as its Inception-V1 figure does,
though its table is said to count multiply-adds.
"""

from __future__ import annotations

import torch
from torch import nn

from edgebench.zoo.mobilenet_v2 import ConvBNReLU, InvertedResidual, MobileNetV2


class MobileNetV2Backbone(nn.Module):
    """MobileNetV2 features with ``output_stride`` reached by strides and the rest by dilation (atrous rates)."""

    def __init__(self, in_channels: int = 3, output_stride: int = 8) -> None:
        super().__init__()
        layers: list[nn.Module] = [ConvBNReLU(in_channels, 32, stride=2)]
        in_ch, current, rate = 32, 2, 1
        for t, c, n, s in MobileNetV2.SETTINGS:
            for i in range(n):
                stride = s if i == 0 else 1
                layer_rate = rate
                if stride > 1 and current == output_stride:
                    stride, rate = 1, rate * s  # as TensorFlow's slim: this block keeps the old rate
                elif stride > 1:
                    current *= stride
                layers.append(InvertedResidual(in_ch, c, stride, t, dilation=layer_rate))
                in_ch = c
        self.layers = nn.Sequential(*layers)
        self.out_channels = in_ch

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


class DeepLabV3(nn.Module):
    def __init__(self, num_classes: int = 21, in_channels: int = 3, output_stride: int = 8, depth: int = 256) -> None:
        super().__init__()
        self.backbone = MobileNetV2Backbone(in_channels, output_stride)
        c = self.backbone.out_channels
        self.image_pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), ConvBNReLU(c, depth, kernel=1))
        self.aspp0 = ConvBNReLU(c, depth, kernel=1)
        self.project = nn.Sequential(ConvBNReLU(2 * depth, depth, kernel=1), nn.Dropout2d(0.1))
        self.logits = nn.Conv2d(depth, num_classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Per-pixel logits at output stride (65x65 for a 513x513 input)."""
        f = self.backbone(x)
        pooled = self.image_pool(f).expand(-1, -1, f.shape[2], f.shape[3])
        return self.logits(self.project(torch.cat([pooled, self.aspp0(f)], 1)))


def deeplab_v3(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``deeplab_v3`` workload (:mod:`edgebench.workloads.deeplab_v3`)."""
    return DeepLabV3(num_classes, shape[0])
