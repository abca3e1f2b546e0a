"""DCGAN (Radford et al. 2016) for 32x32 images: a generator and a discriminator, about 1M parameters each.

Generator: 100-d noise -> transposed convolutions (4x4, stride 2) doubling the size from 4x4 to the image,
batch norm and ReLU, tanh out.  Discriminator: the mirror image with strided convolutions and leaky ReLU, one
logit out.  Widths follow the DCGAN reference code (64 feature maps at the full resolution).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from edgebench.zoo.layers import BatchNorm2d


def _doublings(size: int) -> int:
    n = int(math.log2(size / 4))
    if size < 8 or 4 * 2**n != size:
        raise ValueError(f"DCGAN image size must be 4 * 2**n (8, 16, 32, 64...), not {size}")
    return n


class Generator(nn.Module):
    def __init__(self, image_shape: tuple[int, ...] = (3, 32, 32), latent: int = 100, width: int = 64) -> None:
        super().__init__()
        n = _doublings(image_shape[-1])
        channels = width * 2 ** (n - 1)
        layers: list[nn.Module] = [
            nn.ConvTranspose2d(latent, channels, 4, 1, 0, bias=False),
            BatchNorm2d(channels),
            nn.ReLU(True),
        ]
        for _ in range(n - 1):
            layers += [
                nn.ConvTranspose2d(channels, channels // 2, 4, 2, 1, bias=False),
                BatchNorm2d(channels // 2),
                nn.ReLU(True),
            ]
            channels //= 2
        layers += [nn.ConvTranspose2d(channels, image_shape[0], 4, 2, 1, bias=False), nn.Tanh()]
        self.net = nn.Sequential(*layers)
        self.latent = latent

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.net(z.view(z.shape[0], self.latent, 1, 1))


class Discriminator(nn.Module):
    def __init__(self, image_shape: tuple[int, ...] = (3, 32, 32), width: int = 64) -> None:
        super().__init__()
        n = _doublings(image_shape[-1])
        layers: list[nn.Module] = [nn.Conv2d(image_shape[0], width, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, True)]
        channels = width
        for _ in range(n - 1):
            layers += [
                nn.Conv2d(channels, channels * 2, 4, 2, 1, bias=False),
                BatchNorm2d(channels * 2),
                nn.LeakyReLU(0.2, True),
            ]
            channels *= 2
        layers.append(nn.Conv2d(channels, 1, 4, 1, 0, bias=False))
        self.net = nn.Sequential(*layers)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.net(images).flatten()


class DCGAN(nn.Module):
    """Both networks in one module, so that parameter counts, tracing and ``.to()`` see the whole workload."""

    def __init__(self, image_shape: tuple[int, ...] = (3, 32, 32), latent: int = 100) -> None:
        super().__init__()
        self.generator = Generator(image_shape, latent)
        self.discriminator = Discriminator(image_shape)
        for m in self.modules():  # the paper's init: N(0, 0.02) weights, BN scale N(1, 0.02)
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
                nn.init.normal_(m.weight, 0.0, 0.02)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.normal_(m.weight, 1.0, 0.02)
                nn.init.zeros_(m.bias)


def dcgan(num_classes: int, shape: tuple[int, ...]) -> nn.Module:
    """The model of the ``dcgan`` workload (:mod:`edgebench.workloads.dcgan`)."""
    return DCGAN(shape)
