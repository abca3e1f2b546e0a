"""Writing a file whole or not at all: beside its final name, then renamed into place, the temporary file removed
on every way out, so a failure never leaves a half-written file and a concurrent reader sees the old file or the
new one (a command's outputs, the caches of derived files).

And where a file may go when its name comes from data (a device's file list, a trial's label): :func:`inside` keeps
a path under the folder asked for, :func:`file_name` makes one safe file name of any text.  Every name built from
data goes through one of the two, so nothing is written outside the folder the user gave.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
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


def below(relative: str) -> str:
    """``relative`` normalised (POSIX), if it names a path strictly below the folder it is relative to; else a
    ``ValueError``.  Refused: an absolute path, one whose ``..`` climbs out, and the folder itself (``.``, ``""``).
    Lexical only, so it holds for a device's paths too (see :func:`inside` for this machine's)."""
    normal = posixpath.normpath(relative) if relative else "."
    if relative.startswith("/") or normal in (".", "..") or normal.startswith("../") or "\0" in relative:
        raise ValueError(f"{relative!r} is not a path inside the folder")
    return normal


def inside(folder: Path, relative: str) -> Path:
    """``folder / relative`` if that stays inside ``folder`` (:func:`below`, and where ``folder`` exists no symbolic
    link inside it leads out); else a ``ValueError`` naming ``relative``."""
    try:
        path = folder / below(relative)
    except ValueError:
        raise ValueError(f"{relative!r} is not a path inside {folder}") from None
    if folder.exists() and not path.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"{relative!r} leads out of {folder} through a symbolic link")
    return path


_UNSAFE = re.compile(r"[^\w.+=@,-]+")
#: A file name's length limit here, leaving room for a suffix (``.csv``, ``.result``) under the usual 255 bytes.
NAME_BYTES = 120


def file_name(text: str, fallback: str = "unnamed") -> str:
    """One safe file name made of ``text`` (a label, a model name, a device's name): what is not a letter, digit or
    one of ``.+=@,-`` becomes ``_`` (``/`` and ``\\`` included), leading dots go (no ``..``, no hidden file), and it
    is cut to :data:`NAME_BYTES` bytes; ``fallback`` if nothing is left.  The one sanitizer for names from data."""
    name = _UNSAFE.sub("_", text).lstrip(".")
    while len(name.encode()) > NAME_BYTES:
        name = name[:-1]
    return name if name.strip("_") else fallback
