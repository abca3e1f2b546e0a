"""The ONNX Runtime backend: inference of a zoo model exported from its PyTorch definition and seeded weights.

This file declares the backend without importing onnxruntime (nor torch); :mod:`.session` imports both when a
trial runs.  ONNX Runtime has no training here (``onnxruntime-training`` is a different package), so the backend
offers ``infer`` only and ``--mode train`` is refused before anything starts.
"""

from __future__ import annotations

from edgebench.backends.base import Backend, Capabilities

#: What to install when the package is missing (the ``onnx`` extra: onnxruntime and onnx).
INSTALL = "pip install 'edgebench[onnx]'"

ONNXRUNTIME = Backend(
    name="onnxruntime",
    capabilities=Capabilities(
        modes=("infer",),
        precisions=("fp32", "int8"),
        devices=("cpu",),
        trace_kinds=("none", "layers"),
    ),
    session="edgebench.backends.onnxruntime.session:open_session",
    tasks="edgebench.backends.torch.tasks:task_session",
    device_check="edgebench.backends.onnxruntime:missing_package",
    model_check="edgebench.backends.onnxruntime:model_refusal",
)


def model_refusal(model: str, mode: str) -> str | None:
    """Why this backend cannot run ``model`` (a language model, :data:`edgebench.workloads.lm.RUNTIME_REFUSALS`)."""
    from edgebench.workloads import get_workload
    from edgebench.workloads.lm import runtime_refusal

    return runtime_refusal(get_workload(model), "onnxruntime")


def missing_package(device: str) -> str | None:
    """Why this machine cannot run an onnxruntime trial (the package is missing), or None; imports nothing."""
    import importlib.util

    for module in ("onnxruntime", "onnx"):
        if importlib.util.find_spec(module) is None:
            return f"needs the {module} package: {INSTALL}"
    return None
