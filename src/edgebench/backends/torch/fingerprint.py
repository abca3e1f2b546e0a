"""What derived files of a built-in model depend on: the torch backend's sources and torch's version.

Parameter and FLOP counts (``edgebench models``) and ONNX exports are kept on disk and reused while the
fingerprint stays the same; a user's own ``module:factory`` model is never cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
from pathlib import Path

from edgebench.workloads.spec import Workload

#: The model definitions and the counters, all under this folder.
_SOURCES = Path(__file__).resolve().parent


def fingerprint() -> str:
    """The torch backend's sources and torch's version: the counts are valid while this stays the same."""
    digest = hashlib.sha256()
    for path in sorted(_SOURCES.rglob("*.py")):
        digest.update(str(path.relative_to(_SOURCES)).encode() + b"\0" + path.read_bytes())
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        digest.update(importlib.metadata.version("torch").encode())
    return digest.hexdigest()[:16]


def cacheable(workload: Workload) -> bool:
    """A built-in workload (its model a ``module:function`` inside edgebench), not a user's own."""
    return isinstance(workload.model, str) and workload.model.startswith("edgebench.")
