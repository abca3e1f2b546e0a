"""Where files derived from a built-in model are kept between commands (ONNX exports, layer graphs), and how one is
written so that a concurrent reader sees it whole or not at all.

Each is keyed by everything that decides its bytes, the model code's fingerprint
(:func:`edgebench.backends.torch.fingerprint.fingerprint`) among them, so a cached file is never stale; deleting
the folder only costs the next command its speed.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def cache_dir(kind: str) -> Path:
    """``$EDGEBENCH_CACHE_DIR/<kind>``, else ``$XDG_CACHE_HOME/edgebench/<kind>`` (``~/.cache`` by default)."""
    if os.environ.get("EDGEBENCH_CACHE_DIR"):
        return Path(os.environ["EDGEBENCH_CACHE_DIR"]).expanduser() / kind
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache_home / "edgebench" / kind


def write_replacing(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file of this writer's own, renamed onto it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(name, path)
    finally:
        if os.path.exists(name):
            os.unlink(name)
