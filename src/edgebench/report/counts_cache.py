"""Parameter and FLOP counts of the built-in workloads, kept on disk between ``edgebench models`` listings.

Counting builds every model and traces it (half a minute for the whole zoo on a laptop core), yet the counts
change only when a model definition, the counting code or torch changes.  The cache file carries a fingerprint
of those (the torch backend's sources and torch's version) and is ignored whole when it differs; a user's own
``module:factory`` model is never cached.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from edgebench.backends.torch.fingerprint import fingerprint
from edgebench.host.files import read_sealed, write_sealed


def default_cache_path() -> Path:
    """``$EDGEBENCH_CACHE``, else ``$XDG_CACHE_HOME/edgebench/model-counts.json`` (``~/.cache`` by default)."""
    if os.environ.get("EDGEBENCH_CACHE"):
        return Path(os.environ["EDGEBENCH_CACHE"]).expanduser()
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache_home / "edgebench" / "model-counts.json"


class CountCache:
    """``{key: counts}`` read once and written back when new counts were added; unreadable means empty."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_cache_path()
        self._fingerprint = fingerprint()
        self._counts: dict[str, Any] = {}
        self._dirty = False
        data = read_sealed(self.path, self._fingerprint)  # none, torn, stale or edited: counted again
        if data is not None and isinstance(data.get("counts"), dict):
            self._counts = dict(data["counts"])

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
            write_sealed(self.path, {"counts": self._counts}, self._fingerprint)
            self._dirty = False
