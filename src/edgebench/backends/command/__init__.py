"""The ``command`` backend: the user's own workload (``--command``), run by the target's shell, not a worker.

It has no framework session: the device-side ``sh`` runner (:mod:`edgebench.agents.sh.run`) times its steps from
its output.  Its record exists so that ``--command`` trials pass the same capability checks, store the same
``backend`` column and sweep like any backend.
"""

from __future__ import annotations

from typing import Any

from edgebench.backends.base import Backend, Capabilities


def no_session(*_: Any, **__: Any) -> Any:
    """A command trial never opens a framework session; reaching here is a launcher bug, said plainly."""
    raise RuntimeError("a command trial runs through its target's shell (edgebench.agents.sh.run), not a worker")


COMMAND = Backend(
    name="command",
    # The workload decides what it runs: a training demo, an inference benchmark (--mode infer names its steps so),
    # on whatever its binary uses.
    # A tool's step pattern may read per-op spans from what it writes (executor_runner's ETDump): --trace layers.
    capabilities=Capabilities(
        modes=("train", "infer"), precisions=("fp32",), devices=("cpu", "cuda"), trace_kinds=("none", "layers")
    ),
    session="edgebench.backends.command:no_session",
    tasks="edgebench.backends.command:no_session",
)
