"""The vgg workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.vgg`."""

from __future__ import annotations

from edgebench.workloads.presets import CIFAR10, IMAGENET, VISION
from edgebench.workloads.spec import OptimizerSettings, Reference, Workload


def _workload(depth: int, config: str, references: tuple[Reference, ...]) -> Workload:
    return Workload(
        name=f"vgg{depth}",
        domain="vision",
        description=f"VGG{depth} (configuration {config}), ImageNet 3x224x224",
        model=f"edgebench.zoo.vgg:vgg{depth}",
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
