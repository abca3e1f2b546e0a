"""The densenet workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.densenet`."""

from __future__ import annotations

from edgebench.workloads.presets import CIFAR10, IMAGENET
from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

_PRESETS = (CIFAR10, Preset("cifar100", (3, 32, 32), 100, "CIFAR-100"), IMAGENET)


_SGD = OptimizerSettings(lr=0.01, weight_decay=1e-4, schedule="constant")  # 0.1 at batch 64 in the paper


def _workload(depth: int, params: float, paper: str, flops: Reference | None = None) -> Workload:
    return Workload(
        name=f"densenet{depth}",
        domain="vision",
        description=f"DenseNet-{depth} (k=12, no bottleneck or compression), CIFAR-10 3x32x32",
        model=f"edgebench.zoo.densenet:densenet{depth}",
        input_shape=CIFAR10.input_shape,
        num_classes=CIFAR10.num_classes,
        optimizer=_SGD,
        presets=_PRESETS,
        references=(
            Reference("params", params, "CIFAR-10, k=12", paper),
            *((flops,) if flops else ()),
        ),
    )


DENSENET40 = _workload(
    40,
    1.02e6,
    "Liu 2017 (network slimming) table 1: 1.02M; Huang 2017 table 2: 1.0M; characterization paper: 1M",
    # Liu et al. count 2 FLOPs per multiply-add (265M MACs).
    Reference("forward_flops", 5.33e8, "CIFAR-10 32x32", "Liu 2017 (network slimming) table 1: 5.33e8 FLOPs"),
)


DENSENET100 = _workload(100, 7.0e6, "Huang 2017 table 2 (7.0M); characterization paper table II (7M)")
