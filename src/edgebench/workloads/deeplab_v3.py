"""The deeplab_v3 workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.deeplab_v3`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

VOC513 = Preset("voc513", (3, 513, 513), 21, "PASCAL VOC at 513x513, 21 classes (DNNTune)")


DEEPLAB_V3 = Workload(
    name="deeplab_v3",
    domain="segmentation",
    description="DeepLab-V3, MobileNet-V2 backbone at output stride 8, VOC 3x513x513, 21 classes",
    model="edgebench.zoo.deeplab_v3:deeplab_v3",
    input_shape=VOC513.input_shape,
    num_classes=VOC513.num_classes,
    task="segmentation",
    optimizer=OptimizerSettings(lr=0.007, weight_decay=4e-5, schedule="constant"),
    presets=(VOC513, Preset("cityscapes", (3, 769, 769), 19, "Cityscapes crops at 769x769, 19 classes")),
    references=(
        Reference("params", 2.1e6, "MobileNet-V2 backbone, 21 classes", "DNNTune table 1 (2.1M as listed)"),
        Reference("forward_flops", 17.8e9, "513x513, output stride 8", "DNNTune table 1 (17.8 G)"),
    ),
)
