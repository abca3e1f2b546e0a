"""Writing a file whole or not at all: beside its final name, then renamed into place, the temporary file removed
on every way out, so a failure never leaves a half-written file and a concurrent reader sees the old file or the
new one (a command's outputs, the caches of derived files).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` on success, removed on any failure."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    tmp.chmod(0o666 & ~_umask())  # mkstemp makes it private; the file gets the mode a plain open() would give
    try:
        yield tmp
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_replacing(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_with(path: Path, write: Callable[[Path], None]) -> None:
    """Let ``write`` fill a temporary file, then put it in place as ``path`` (whole or not at all)."""
    with replacing(path) as tmp:
        write(tmp)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
