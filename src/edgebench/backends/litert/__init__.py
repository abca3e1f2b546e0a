"""The LiteRT backend (TensorFlow Lite's new name): inference of a zoo model converted to ``.tflite`` from its PyTorch
definition and seeded weights, or of the user's own ``.tflite`` file, on the runtime's default XNNPACK delegate.

The runtime is the ``ai-edge-litert`` wheel (``Interpreter``, and its C API ``libLiteRt.so`` for the op profiler);
the converter is ``litert-torch`` (PyTorch -> ``.tflite``) with ``ai-edge-quantizer`` for fp16 and int8, a separate
extra because it pulls jax and transformers.  This file declares the backend without importing either; the session
(:mod:`.session`) imports the runtime when a trial runs, and the conversion runs in a child process
(:mod:`.prepare`).  LiteRT trains nothing here, so the backend offers ``infer`` only.

Precisions: ``fp32``; ``fp16`` (weights stored as fp16, arithmetic in fp32: XNNPACK dequantizes them when the model
loads); ``int8`` (full integer: int8 weights and activations, int8 inputs and outputs, ranges calibrated on a
representative dataset); ``int8-dynamic`` (dynamic range: int8 weights, activations quantized at run time, float
inputs and outputs).
"""

from __future__ import annotations

from edgebench.backends.base import Backend, Capabilities

#: What to install when the runtime is missing (the ``litert`` extra: ai-edge-litert).
INSTALL = "pip install 'edgebench[litert]'"
#: What to install to convert zoo models (the ``litert-convert`` extra: litert-torch, ai-edge-quantizer).
CONVERT_INSTALL = "pip install 'edgebench[litert-convert]'"

LITERT = Backend(
    name="litert",
    capabilities=Capabilities(
        modes=("infer",),
        precisions=("fp32", "fp16", "int8", "int8-dynamic"),
        devices=("cpu",),
        trace_kinds=("none", "layers"),
        file_precisions=("fp32",),
    ),
    session="edgebench.backends.litert.session:open_session",
    tasks="edgebench.backends.torch.tasks:task_session",
    device_check="edgebench.backends.litert:missing_package",
    model_check="edgebench.backends.litert:model_refusal",
)


def model_refusal(model: str, mode: str) -> str | None:
    """Why this backend cannot convert ``model``, before anything starts: a language model
    (:data:`edgebench.workloads.lm.RUNTIME_REFUSALS`), as for ONNX Runtime."""
    from edgebench.workloads import get_workload
    from edgebench.workloads.lm import runtime_refusal

    return runtime_refusal(get_workload(model), "litert")


def missing_package(device: str = "cpu") -> str | None:
    """Why this machine cannot run a LiteRT trial (the runtime is missing), or None; imports nothing."""
    import importlib.util

    if importlib.util.find_spec("ai_edge_litert") is None:
        return f"the litert backend needs the ai-edge-litert package: {INSTALL}"
    return None


def missing_converter() -> str | None:
    """Why this machine cannot convert a zoo model to ``.tflite`` (the converter is missing), or None."""
    import importlib.util

    for module, package in (("litert_torch", "litert-torch"), ("ai_edge_quantizer", "ai-edge-quantizer")):
        if importlib.util.find_spec(module) is None:
            return f"converting a zoo model to .tflite needs the {package} package: {CONVERT_INSTALL}"
    return None
