"""Which zoo models the ExecuTorch backends run, for inference and for training, and why not where they refuse.

Framework-free, for trial validation: the task and the optimizer decide first (one image tensor in, cross-entropy
on logits; ExecuTorch's training API has SGD only), then the recorded probe (``support.json`` beside this file:
each model lowered and run once per mode with the ExecuTorch version it names), written by
``python -m edgebench.backends.executorch.probe --write``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from edgebench.workloads.spec import Workload

#: The recorded table (``{"executorch": version, "torch": version, "models": {name: entry}}``).
RECORD = Path(__file__).with_name("support.json")


def unsupported(workload: Workload, mode: str = "train") -> str | None:
    """Why ExecuTorch cannot run ``workload`` in ``mode``, or None; framework-free."""
    if workload.task != "classification":
        return (
            f"{workload.name} is a {workload.task} task; the executorch backends build classification (one input "
            "tensor, cross-entropy on logits) only"
        )
    if mode == "train" and workload.optimizer.kind != "sgd":
        return (
            f"{workload.name} trains with {workload.optimizer.kind}; ExecuTorch's training API has SGD only "
            "(get_sgd_optimizer)"
        )
    return None


def recorded() -> dict[str, Any]:
    """The recorded table; empty when none was written."""
    try:
        return json.loads(RECORD.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def refusal(model: str, mode: str) -> str | None:
    """Why an ExecuTorch trial of ``model`` in ``mode`` cannot run, or None; framework-free (trial validation asks).

    The task and optimizer decide first; then the recorded probe, where it was taken with the installed ExecuTorch.
    """
    import importlib.metadata

    from edgebench.workloads import get_workload

    workload = get_workload(model)
    reason = unsupported(workload, mode)
    if reason or not (isinstance(workload.model, str) and workload.model.startswith("edgebench.")):
        return reason
    record = recorded()
    try:
        installed = importlib.metadata.version("executorch")
    except importlib.metadata.PackageNotFoundError:
        return None  # the missing package is reported on its own
    entry = (record.get("models") or {}).get(workload.name) or {}
    if record.get("executorch") == installed and entry.get(mode):
        return f"ExecuTorch {installed} cannot {'train' if mode == 'train' else 'run'} {workload.name}: {entry[mode]}"
    return None
