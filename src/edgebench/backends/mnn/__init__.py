"""The MNN backend: training and inference of a zoo model converted from its PyTorch definition and weights.

PyTorch -> ONNX -> MNN through the converter's C++ binding (:mod:`.convert`), so architecture and parameter
count match the torch model by construction (and are checked, :mod:`.model`).  This file declares the backend
without importing MNN (nor torch); :mod:`.session` imports both when a trial runs.

MNN's Python ``mnnconvert``/``mnnquant`` console scripts are never used: their wrapper modules
(``MNN.tools.mnnconvert``, ``MNN.tools.utils.log``) ``pip install`` a logging SDK at run time and post the
machine id to a remote log service.
"""

from __future__ import annotations

from edgebench.backends.base import Backend, Capabilities

#: What to install when the package is missing (the ``mnn`` extra pins the version checked here).
INSTALL = "pip install 'edgebench[mnn]'"

MNN_BACKEND = Backend(
    name="mnn",
    capabilities=Capabilities(
        modes=("train", "infer"),
        precisions=("fp32", "fp16", "bf16", "int8"),
        devices=("cpu",),
        trace_kinds=("none", "layers"),
    ),
    session="edgebench.backends.mnn.session:open_session",
    tasks="edgebench.backends.mnn.session:task_session",
    device_check="edgebench.backends.mnn:missing_package",
    model_check="edgebench.backends.mnn.support:refusal",
)


def missing_package(device: str = "cpu") -> str | None:
    """Why this machine cannot run an MNN trial (a package is missing), or None; imports nothing."""
    import importlib.util

    for module, package in (("MNN", "MNN"), ("_tools", "MNN"), ("onnx", "onnx")):
        if importlib.util.find_spec(module) is None:
            return f"the mnn backend needs the {package} package: {INSTALL}"
    return None
