"""Where a command writes: checked before the work starts, and written whole or not at all.

A trace, an export or a monitor run can take a while; a path that cannot take the result (a folder where a file
was meant, a folder that does not exist, a place nobody may write such as ``/proc``) is refused first, in one line
naming the flag.  The files are then written whole or not at all (:mod:`edgebench.host.files`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from edgebench.errors import UsageError


def check_output_file(flag: str, path: Path, example: str) -> Path:
    """``path`` can be created or replaced as a file; ``example`` names a file to suggest inside a folder."""
    if path.is_dir():
        raise UsageError(flag, f"{path} is a folder; give a file name, e.g. {flag} {path / example}")
    if not path.parent.is_dir():
        raise UsageError(flag, f"folder {path.parent} does not exist; create it or give another path")
    _probe(flag, path.parent)
    return path


def check_output_folder(flag: str, path: Path) -> Path:
    """``path`` is a folder, or can be made one, that this process may write in."""
    if path.exists() and not path.is_dir():
        raise UsageError(flag, f"{path} is a file; give a folder")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise UsageError(flag, f"{existing} is a file, so {path} cannot be made a folder")
    _probe(flag, existing)
    return path


def _probe(flag: str, folder: Path) -> None:
    """Create and remove a file in ``folder``: the only test that holds for root, read-only mounts and ``/proc``."""
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=".edgebench-probe-")
    except OSError as exc:
        raise UsageError(flag, f"cannot write in {folder} ({exc.strerror or exc}); give another path") from None
    os.close(fd)
    os.unlink(name)
