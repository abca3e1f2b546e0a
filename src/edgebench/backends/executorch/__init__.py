"""The ExecuTorch backend: a zoo model exported from its PyTorch definition and seeded weights, lowered to an
ExecuTorch program (``.pte``) and run by ExecuTorch's C++ runtime; or a user's ``.pte`` file.

Two backends, one per kind of kernel a program runs on, because they are two deployments of one model, each with
its own speed, size and precisions:

* ``executorch``: the XNNPACK delegate takes what it supports (``to_edge_transform_and_lower`` with
  ``XnnpackPartitioner``: every conv, linear and pooling of a CNN), ExecuTorch's portable kernels run the rest;
  fp32, fp16 and int8 (XNNPACK's PT2E quantizer);
* ``executorch-portable``: ExecuTorch's portable (reference C++) kernels only, fp32 and fp16.

Training runs the program ExecuTorch's training API builds (forward and backward exported as one joint graph,
``torch.export.experimental._export_forward_backward``) on the portable kernels, whichever of the two backends
asked (XNNPACK packs the weights when the program loads, so a program whose weights the optimizer updates cannot
be delegated to it); the optimizer step is the runtime's own SGD (``get_sgd_optimizer``).  :mod:`.lower` says
what the lowering works around.

This file declares both without importing ExecuTorch (nor torch); :mod:`.session` imports the runtime when a trial
runs, :mod:`.prepare` the exporter in a child process.
"""

from __future__ import annotations

from edgebench.backends.base import Backend, Capabilities

#: What to install when the package is missing (the ``executorch`` extra pins the version checked here).
INSTALL = "pip install 'edgebench[executorch]'"
#: The two backends' names, and which kernels each lowers a zoo model to.
KERNELS = {"executorch": "xnnpack", "executorch-portable": "portable"}

EXECUTORCH = Backend(
    name="executorch",
    capabilities=Capabilities(
        modes=("train", "infer"),
        precisions=("fp32", "fp16", "int8"),
        devices=("cpu",),
        trace_kinds=("none", "layers"),
    ),
    session="edgebench.backends.executorch.session:open_session",
    tasks="edgebench.backends.executorch.session:task_session",
    device_check="edgebench.backends.executorch:missing_package",
    model_check="edgebench.backends.executorch.support:refusal",
)

EXECUTORCH_PORTABLE = Backend(
    name="executorch-portable",
    capabilities=Capabilities(
        modes=("train", "infer"),
        # No int8: the runtime's portable kernels have no quantized ops (only XNNPACK runs int8 programs).
        precisions=("fp32", "fp16"),
        devices=("cpu",),
        trace_kinds=("none", "layers"),
    ),
    session="edgebench.backends.executorch.session:open_session",
    tasks="edgebench.backends.executorch.session:task_session",
    device_check="edgebench.backends.executorch:missing_package",
    model_check="edgebench.backends.executorch.support:refusal",
)


def missing_package(device: str = "cpu") -> str | None:
    """Why this machine cannot run an ExecuTorch trial (the package or its runtime extension is missing), or None;
    imports nothing (looking up a top-level name runs no code, and the extension is looked for as a file)."""
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("executorch")
    except (ImportError, ValueError):  # a blocked import
        spec = None
    folders = [] if spec is None else list(spec.submodule_search_locations or [])
    if not any(any((Path(f) / "extension" / "pybindings").glob("_C*")) for f in folders):
        return f"the executorch backend needs the executorch package: {INSTALL}"
    return None
