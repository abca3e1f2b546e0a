"""The lenet workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.lenet`."""

from __future__ import annotations

from edgebench.workloads.presets import MNIST
from edgebench.workloads.spec import Reference, Workload

LENET = Workload(
    name="lenet",
    domain="vision",
    description="LeNet of the MNN-based suite (conv 20/50, fc 400), MNIST 1x28x28",
    model="edgebench.zoo.lenet:lenet",
    input_shape=(1, 28, 28),
    num_classes=10,
    presets=(MNIST,),
    references=(
        Reference(
            "params",
            349_980,
            "10 classes, 1x28x28",
            "layer sizes of Lenet.cpp in UbiquitousLearning/Benchmark-On-Device-Training (its README's 3.2K is wrong)",
        ),
    ),
)
