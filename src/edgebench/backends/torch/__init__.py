"""The PyTorch backend: the training tasks, the session (threads, the CUDA memory cap), int8, run-time tracing.

The models it trains are :mod:`edgebench.zoo`'s (with the precision a step runs at); their FLOPs, layer graphs and
static features are :mod:`edgebench.graph`'s.

This file declares the backend without importing torch; :mod:`.session` imports it when a trial runs.
"""

from __future__ import annotations

from edgebench.backends.base import Backend, Capabilities

TORCH = Backend(
    name="torch",
    capabilities=Capabilities(
        modes=("train", "infer"),
        precisions=("fp32", "bf16", "fp16", "int8"),
        devices=("cpu", "cuda"),
        trace_kinds=("none", "layers", "ops"),
    ),
    session="edgebench.backends.torch.session:open_session",
    tasks="edgebench.backends.torch.tasks:task_session",
    device_check="edgebench.backends.torch.devices:missing_device",
)
