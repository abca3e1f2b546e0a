"""Parameter and FLOP counts of the built-in workloads, kept on disk between ``edgebench models`` listings.

Counting builds every model and traces it (half a minute for the whole zoo on a laptop core), yet the counts
change only when a model definition, the counting code or torch changes.  The cache file carries a fingerprint
of those (the torch backend's sources and torch's version) and is ignored whole when it differs; a user's own
``module:factory`` model is never cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path
from typing import Any

from edgebench.outputs import write_text_replacing
from edgebench.workloads.spec import Workload

#: What the counts depend on besides torch: the model definitions and the counters, all under this folder.
_SOURCES = Path(__file__).resolve().parent.parent / "backends" / "torch"


def default_cache_path() -> Path:
    """``$EDGEBENCH_CACHE``, else ``$XDG_CACHE_HOME/edgebench/model-counts.json`` (``~/.cache`` by default)."""
    if os.environ.get("EDGEBENCH_CACHE"):
        return Path(os.environ["EDGEBENCH_CACHE"]).expanduser()
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache_home / "edgebench" / "model-counts.json"


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


class CountCache:
    """``{key: counts}`` read once and written back when new counts were added; unreadable means empty."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_cache_path()
        self._fingerprint = fingerprint()
        self._counts: dict[str, Any] = {}
        self._dirty = False
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("fingerprint") == self._fingerprint:
                self._counts = dict(data.get("counts") or {})

    def get(self, key: str) -> Any:
        return self._counts.get(key)

    def put(self, key: str, value: Any) -> None:
        self._counts[key] = value
        self._dirty = True

    def save(self) -> None:
        """Write the counts back; a cache that cannot be written only costs the next listing its speed."""
        if not self._dirty:
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_text_replacing(self.path, json.dumps({"fingerprint": self._fingerprint, "counts": self._counts}))
            self._dirty = False
