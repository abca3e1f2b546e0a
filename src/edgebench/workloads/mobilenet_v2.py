"""The mobilenet_v2 workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.mobilenet_v2`."""

from __future__ import annotations

from edgebench.workloads.presets import VISION
from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

MOBILENET_V2 = Workload(
    name="mobilenet_v2",
    domain="vision",
    description="MobileNetV2 width 1.0, 3x224x224, 1001 classes as in the MNN-based suite",
    model="edgebench.zoo.mobilenet_v2:mobilenet_v2",
    input_shape=(3, 224, 224),
    num_classes=1001,
    optimizer=OptimizerSettings(lr=1e-5, weight_decay=4e-5, schedule="constant"),
    presets=(
        Preset("mnn", (3, 224, 224), 1001, "224x224 with 1001 classes, as the MNN-based suite trains it"),
        *VISION,
    ),
    references=(
        Reference(
            "params", 3_504_872, "ImageNet head (1000 classes)", "torchvision mobilenet_v2; Sandler 2018", "imagenet"
        ),
        # Sandler et al. and DNNTune round TensorFlow's 3.47M down to 3.4M.
        Reference("params", 3.4e6, "ImageNet head", "Sandler 2018 table 4; DNNTune (3.4M)", "imagenet", rel_tol=0.035),
        Reference("forward_macs", 300e6, "224x224", "Sandler 2018 table 4; DNNTune (300M)", "imagenet"),
    ),
)
