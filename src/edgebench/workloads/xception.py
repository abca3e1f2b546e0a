"""The xception workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.xception`."""

from __future__ import annotations

from edgebench.workloads.presets import CIFAR10, MNN
from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

IMAGENET299 = Preset("imagenet", (3, 299, 299), 1000, "ImageNet at 299x299, 1000 classes (the published figures)")


XCEPTION = Workload(
    name="xception",
    domain="vision",
    description="Xception, ImageNet 3x299x299",
    model="edgebench.zoo.xception:xception",
    input_shape=IMAGENET299.input_shape,
    num_classes=IMAGENET299.num_classes,
    optimizer=OptimizerSettings(lr=0.045, weight_decay=1e-5, schedule="constant"),
    presets=(IMAGENET299, CIFAR10, MNN),
    references=(
        # Keras' 22,910,480 also counts batch norm's moving mean and variance, which are not trained.
        Reference("params", 22.9e6, "ImageNet head (1000 classes)", "Chollet 2017; Keras applications (22.9M)"),
    ),
)
