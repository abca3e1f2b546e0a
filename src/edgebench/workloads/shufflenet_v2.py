"""The shufflenet_v2 workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.shufflenet_v2`."""

from __future__ import annotations

from edgebench.workloads.presets import IMAGENET, VISION
from edgebench.workloads.spec import OptimizerSettings, Reference, Workload

SHUFFLENET_V2 = Workload(
    name="shufflenet_v2_0.5x",
    domain="vision",
    description="ShuffleNet-V2 0.5x, ImageNet 3x224x224",
    model="edgebench.zoo.shufflenet_v2:shufflenet_v2_05x",
    input_shape=IMAGENET.input_shape,
    num_classes=IMAGENET.num_classes,
    optimizer=OptimizerSettings(lr=0.05, weight_decay=4e-5, schedule="constant"),
    presets=VISION,
    references=(
        Reference("params", 1_366_792, "0.5x, 1000 classes", "torchvision shufflenet_v2_x0_5"),
        # The paper and DNNTune round to 0.1M: 1.4M stands for 1.35-1.45M.
        Reference("params", 1.4e6, "0.5x, 1000 classes", "Ma 2018 table 5; DNNTune (1.4M)", rel_tol=0.036),
        Reference("forward_macs", 41e6, "224x224", "Ma 2018 (41 MFLOPs as mult-adds); DNNTune (41M)", rel_tol=0.02),
    ),
)
