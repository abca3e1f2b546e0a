"""The mobilenet_v1 workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.mobilenet_v1`."""

from __future__ import annotations

from edgebench.workloads.presets import IMAGENET, VISION
from edgebench.workloads.spec import OptimizerSettings, Reference, Workload

MOBILENET_V1 = Workload(
    name="mobilenet_v1",
    domain="vision",
    description="MobileNet-V1 width 1.0, ImageNet 3x224x224",
    model="edgebench.zoo.mobilenet_v1:mobilenet_v1",
    input_shape=IMAGENET.input_shape,
    num_classes=IMAGENET.num_classes,
    optimizer=OptimizerSettings(lr=0.01, weight_decay=4e-5, schedule="constant"),
    presets=VISION,
    references=(
        Reference("params", 4.2e6, "1.0 MobileNet-224, 1000 classes", "Howard 2017 table 8 (4.2M); DNNTune (4.2M)"),
        Reference("forward_macs", 569e6, "224x224", "Howard 2017 table 8 (569M mult-adds)"),
        # DNNTune's 576M for its TensorFlow graph is 1.2% above the paper's count.
        Reference("forward_macs", 576e6, "224x224", "DNNTune table 1 (576M)", rel_tol=0.02),
    ),
)
