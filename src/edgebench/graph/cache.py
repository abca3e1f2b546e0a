"""Where files derived from a built-in model are kept between commands, and what they depend on.

Parameter and FLOP counts (:mod:`.counts`), ONNX exports (:mod:`.export`) and layer graphs (:mod:`.graph_cache`) change
only with the model code, the code that derives them and torch, yet making them builds and runs the model (seconds
each).  Each is keyed by everything that decides its bytes, the code's :func:`fingerprint` among them, so a cached
file is never stale, and written whole (:mod:`edgebench.host.files`), so a concurrent reader sees it whole or not at
all; deleting the folder only costs the next command its speed.  A user's own ``module:factory`` model is never
cached (:func:`cacheable`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
from pathlib import Path

from edgebench.workloads.spec import Workload

_PACKAGE = Path(__file__).resolve().parents[1]
#: What a derived file can depend on: the model definitions (``zoo/``), the code that counts, records and exports
#: (``graph/``) and the torch backend's training steps that drive the model (``backends/torch/``).
_SOURCES = ("zoo", "graph", "backends/torch")


def cache_dir(kind: str) -> Path:
    """``$EDGEBENCH_CACHE_DIR/<kind>``, else ``$XDG_CACHE_HOME/edgebench/<kind>`` (``~/.cache`` by default)."""
    if os.environ.get("EDGEBENCH_CACHE_DIR"):
        return Path(os.environ["EDGEBENCH_CACHE_DIR"]).expanduser() / kind
    return _cache_home() / "edgebench" / kind


def counts_path() -> Path:
    """The counts' file: ``$EDGEBENCH_CACHE``, else ``$XDG_CACHE_HOME/edgebench/model-counts.json``."""
    if os.environ.get("EDGEBENCH_CACHE"):
        return Path(os.environ["EDGEBENCH_CACHE"]).expanduser()
    return _cache_home() / "edgebench" / "model-counts.json"


def _cache_home() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def fingerprint(sources: tuple[str, ...] = _SOURCES) -> str:
    """The sources of ``sources`` (folders of the package; :data:`_SOURCES` by default) and torch's version: a
    derived file is valid while this stays the same."""
    digest = hashlib.sha256()
    for folder in sources:
        for path in sorted((_PACKAGE / folder).rglob("*.py")):
            digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes())
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        digest.update(importlib.metadata.version("torch").encode())
    return digest.hexdigest()[:16]


def cacheable(workload: Workload) -> bool:
    """A built-in workload (its model a ``module:function`` inside edgebench), not a user's own."""
    return isinstance(workload.model, str) and workload.model.startswith("edgebench.")
