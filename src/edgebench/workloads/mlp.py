"""The mlp workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.mlp`."""

from __future__ import annotations

from edgebench.workloads.spec import Preset, Reference, Workload

MNIST_FLAT = Preset("mnist", (784,), 10, "MNIST digits flattened to 784 values, 10 classes")


MNIST_MLP = Workload(
    name="mnist_mlp",
    domain="mlp",
    description="MLP 784-2024x4-10 on MNIST",
    model="edgebench.zoo.mlp:mnist_mlp",
    input_shape=MNIST_FLAT.input_shape,
    num_classes=MNIST_FLAT.num_classes,
    presets=(MNIST_FLAT,),
    references=(
        Reference("params", 13.9e6, "784-2024x4-10 (see module)", "DNNTune table 1 (13.9M)"),
        Reference("forward_macs", 13.9e6, "one digit", "DNNTune table 1 (13.9M)"),
    ),
)
