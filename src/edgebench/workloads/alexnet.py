"""The alexnet workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.alexnet`."""

from __future__ import annotations

from edgebench.workloads.presets import IMAGENET, MNN
from edgebench.workloads.spec import Preset, Reference, Workload

ALEXNET = Workload(
    name="alexnet",
    domain="vision",
    description="AlexNet, 3x224x224, 10 classes as in the MNN-based suite",
    model="edgebench.zoo.alexnet:alexnet",
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
