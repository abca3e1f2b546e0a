"""The googlenet workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.googlenet`."""

from __future__ import annotations

from edgebench.workloads.presets import VISION
from edgebench.workloads.spec import Reference, Workload

GOOGLENET = Workload(
    name="googlenet",
    domain="vision",
    description="GoogLeNet / Inception-v1, 3x224x224, 10 classes as in the MNN-based suite",
    model="edgebench.zoo.googlenet:googlenet",
    input_shape=(3, 224, 224),
    num_classes=10,
    presets=VISION,
    references=(
        Reference(
            "params", 6_624_904, "ImageNet head (1000 classes), no aux heads", "torchvision googlenet", "imagenet"
        ),
        # DNNTune's TensorFlow graph; the paper's 5x5 kernels in the third branch would make 7.0M here.
        Reference("params", 6.79e6, "ImageNet head", "DNNTune table 1 (6.79M)", "imagenet", rel_tol=0.03),
        Reference("forward_macs", 1.50e9, "224x224", "torchvision googlenet (1.50 GMACs)", "imagenet"),
        # DNNTune's 3.19 G is two FLOPs per multiply-add of the 5x5 original (1.58 G), 6% above this layout.
        Reference("forward_flops", 3.19e9, "224x224", "DNNTune table 1 (3.19 G)", "imagenet", rel_tol=0.07),
    ),
)
