"""Input presets shared by many workloads: the datasets the source systems trained and measured on."""

from __future__ import annotations

from edgebench.workloads.spec import Preset

IMAGENET = Preset("imagenet", (3, 224, 224), 1000, "ImageNet at 224x224, 1000 classes (the published figures)")
CIFAR10 = Preset("cifar10", (3, 32, 32), 10, "CIFAR-10, 32x32, 10 classes (the characterization paper)")
MNN = Preset("mnn", (3, 224, 224), 10, "224x224 with 10 classes, as the MNN-based suite trains it")
MNIST = Preset("mnist", (1, 28, 28), 10, "MNIST digits, 28x28, 10 classes")

VISION = (IMAGENET, CIFAR10, MNN)
