"""Each module's FLOPs, bytes and calls per step for a configuration that was never run on the device.

The predictor (:mod:`edgebench.predict`) needs, for a model at a batch size, the same per-layer features a
traced trial stores (:data:`edgebench.records.spans.COST_FIELDS`, in :func:`module_labels` order).  They depend
only on the graph and the tensor shapes, not on the device, so they are counted here on this host's CPU with the
same counter the tracer uses (:func:`count_layer_costs`): one step under a dispatch mode, no timing kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from edgebench.backends.torch.tracing.flops import count_layer_costs
from edgebench.backends.torch.tracing.layers import module_labels
from edgebench.workloads import get_workload


@dataclass(frozen=True)
class GraphCosts:
    """A model's labels (as a layer trace names them) with their own costs per step at one batch size."""

    names: tuple[str, ...]
    types: tuple[str, ...]
    parents: tuple[int, ...]
    #: Per label, keyed by :data:`edgebench.records.spans.COST_FIELDS`.
    costs: dict[str, np.ndarray]
    #: Forward calls per step of each label (an RNN cell is called once per time step).
    calls: np.ndarray
    #: The step's costs outside every module: the loss, and in training the optimizer update.
    unattributed: dict[str, float]
    params: int
    input_shape: tuple[int, ...]


def graph_costs(
    model: str,
    batch_size: int,
    *,
    mode: str = "train",
    preset: str | None = None,
    input_shape: tuple[int, ...] | None = None,
    num_classes: int | None = None,
) -> GraphCosts:
    """Count ``model``'s per-module costs for one training step (``mode="train"``) or one forward pass."""
    workload = get_workload(model)
    chosen = workload.preset(preset) if preset else None
    shape = input_shape or (chosen.input_shape if chosen else None)
    classes = num_classes or (chosen.num_classes if chosen else None)
    torch.manual_seed(0)
    task = workload.session(batch_size, input_shape=shape, num_classes=classes, device="cpu", seed=0)
    net: torch.nn.Module = task.model
    modules, names, types, parents = module_labels(net)
    calls = np.zeros(len(modules))

    def counter(label: int) -> Any:
        def hook(module: torch.nn.Module, args: Any) -> None:
            calls[label] += 1

        return hook

    handles = [m.register_forward_pre_hook(counter(i)) for i, m in enumerate(modules)]
    try:
        if mode == "train":
            costs, unattributed = count_layer_costs(net, task.train_step)
        else:
            net.eval()
            with torch.no_grad():
                costs, unattributed = count_layer_costs(net, task.infer_step)
    finally:
        for handle in handles:
            handle.remove()
    return GraphCosts(
        names=tuple(names),
        types=tuple(types),
        parents=tuple(parents),
        costs=costs,
        calls=calls,
        unattributed=unattributed,
        params=sum(p.numel() for p in net.parameters()),
        input_shape=tuple(getattr(task, "input_shape", None) or shape or workload.input_shape),
    )
