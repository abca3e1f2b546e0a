"""The dcgan workloads as plain data, no framework.

The model itself is :mod:`edgebench.zoo.dcgan`."""

from __future__ import annotations

from edgebench.workloads.spec import OptimizerSettings, Preset, Reference, Workload

CIFAR10 = Preset("cifar10", (3, 32, 32), 1, "CIFAR-10-sized images, 32x32 (the characterization paper)")


# "~1M per net" without a configuration: the generator has 1.07M here and the discriminator 0.66M.
DCGAN_WORKLOAD = Workload(
    name="dcgan",
    domain="image generation",
    description="DCGAN generator + discriminator, 32x32x3 images, 100-d noise",
    model="edgebench.zoo.dcgan:dcgan",
    input_shape=CIFAR10.input_shape,
    num_classes=CIFAR10.num_classes,
    task="gan",
    optimizer=OptimizerSettings(lr=2e-4, weight_decay=0.0, schedule="constant", kind="adam", betas=(0.5, 0.999)),
    presets=(CIFAR10, Preset("celeba64", (3, 64, 64), 1, "64x64 faces (the DCGAN paper's size)")),
    references=(
        Reference("params", 1e6, "generator", "characterization paper (~1M per net)", rel_tol=0.1,
                  excludes=("discriminator.",)),
        Reference("params", 1e6, "discriminator", "characterization paper (~1M per net)", rel_tol=0.35,
                  excludes=("generator.",)),
    ),
)  # fmt: skip
