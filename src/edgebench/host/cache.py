"""Where derived files are kept between commands: ONNX exports and layer graphs of the built-in models, the native
sampler built for each device ABI (:mod:`edgebench.sensors.native.build`).

Each is keyed by everything that decides its bytes (the model code's fingerprint,
:func:`edgebench.backends.torch.fingerprint.fingerprint`; the sampler's source digest), so a cached file is never
stale, and written whole (:mod:`edgebench.host.files`), so a concurrent reader sees it whole or not at all; deleting the
folder only costs the next command its speed.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(kind: str) -> Path:
    """``$EDGEBENCH_CACHE_DIR/<kind>``, else ``$XDG_CACHE_HOME/edgebench/<kind>`` (``~/.cache`` by default)."""
    if os.environ.get("EDGEBENCH_CACHE_DIR"):
        return Path(os.environ["EDGEBENCH_CACHE_DIR"]).expanduser() / kind
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache_home / "edgebench" / kind
