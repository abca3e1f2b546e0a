"""The resnet workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.resnet`."""

from __future__ import annotations

from edgebench.workloads.presets import IMAGENET, VISION
from edgebench.workloads.spec import OptimizerSettings, Reference, Workload


def _workload(depth: int, params: int, macs: float, extra: tuple[Reference, ...] = ()) -> Workload:
    return Workload(
        name=f"resnet{depth}",
        domain="vision",
        description=f"ResNet-{depth} (bottleneck, v1.5), ImageNet 3x224x224",
        model=f"edgebench.zoo.resnet:resnet{depth}",
        input_shape=IMAGENET.input_shape,
        num_classes=IMAGENET.num_classes,
        # He et al. use 0.1 at batch 256; 0.01 is that rate scaled to the batch sizes of edge devices (<= 64).
        optimizer=OptimizerSettings(lr=0.01, weight_decay=1e-4, schedule="constant"),
        presets=VISION,
        references=(
            Reference("params", params, "ImageNet head (1000 classes)", f"torchvision resnet{depth}; He 2016"),
            Reference("forward_macs", macs, "224x224", f"torchvision resnet{depth} ({macs / 1e9:.2f} GMACs)"),
            *extra,
        ),
    )


RESNET50 = _workload(
    50,
    25_557_032,
    4.09e9,
    (
        # He et al. count 3.8 G for the original v1 (stride on the 1x1); v1.5 moves it to the 3x3 (+7%).
        Reference("forward_macs", 3.8e9, "224x224, v1 (stride on the 1x1)", "DNNTune table 1; He 2016", rel_tol=0.08),
    ),
)


RESNET101 = _workload(101, 44_549_160, 7.80e9)


RESNET152 = _workload(152, 60_192_808, 11.51e9)
