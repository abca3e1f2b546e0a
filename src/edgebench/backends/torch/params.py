"""Counting a workload's parameters on the torch model definition, built on the ``meta`` device (no memory used)."""

from __future__ import annotations

import torch

from edgebench.workloads.spec import Workload


def count_params(
    workload: Workload, num_classes: int, input_shape: tuple[int, ...], excludes: tuple[str, ...] = ()
) -> int:
    """Parameters of ``workload``'s model, leaving out names that start with one of ``excludes``."""
    with torch.device("meta"):
        model = workload.build_model(num_classes, input_shape)
    if isinstance(model, tuple):  # a user's factory that returns (module, loss_fn)
        model = model[0]
    return sum(p.numel() for n, p in model.named_parameters() if not (excludes and n.startswith(excludes)))
