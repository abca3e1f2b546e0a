"""Writing a file whole or not at all: beside its final name, then renamed into place, the temporary file removed
on every way out, so a failure never leaves a half-written file and a concurrent reader sees the old file or the
new one (a command's outputs, the caches of derived files).

Derived files (an ONNX export, a layer graph, counts) are trusted only as sealed: :func:`write_sealed` keeps with a
document the digest of what it was derived from and of its own content, :func:`read_sealed` gives it back only when
both still hold, so a torn, emptied, stale or edited file is rebuilt, never used.

Configuration files other people wrote are read through :func:`yaml_file` / :func:`config_text`: a regular file,
bounded in size, UTF-8 text, YAML within bounds (:mod:`edgebench.parsing`), else one line naming the flag.

And where a file may go when its name comes from data (a device's file list, a trial's label): :func:`inside` keeps
a path under the folder asked for, :func:`file_name` makes one safe file name of any text.  Every name built from
data goes through one of the two, so nothing is written outside the folder the user gave.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import posixpath
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.parsing import BoundedLoader


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


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in chunks (a model file may be hundreds of MB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


#: A sealed document larger than this is not one edgebench wrote (the largest, a DenseNet's graph, is a few MB).
SEALED_MAX_BYTES = 256 << 20


def write_sealed(path: Path, doc: dict[str, Any], derived_from: str) -> None:
    """Write ``doc`` (JSON) whole, sealed: with ``derived_from`` (a digest of everything that decided it: model code,
    versions, settings) and the SHA-256 of its own text."""
    body = json.dumps(doc, sort_keys=True)
    seal = {"derived_from": derived_from, "sha256": hashlib.sha256(body.encode()).hexdigest(), "body": body}
    write_text_replacing(path, json.dumps(seal))


def read_sealed(path: Path, derived_from: str) -> dict[str, Any] | None:
    """The document :func:`write_sealed` wrote at ``path`` for ``derived_from``, unchanged since; None where there is
    none, or it is torn, from other inputs, or edited: the caller derives it again."""
    try:
        if path.stat().st_size > SEALED_MAX_BYTES:
            return None
        seal = json.loads(path.read_bytes())
        body = seal["body"]
        if seal["derived_from"] != derived_from or hashlib.sha256(body.encode()).hexdigest() != seal["sha256"]:
            return None
        doc = json.loads(body)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def write_description(file: Path, sidecar: Path, doc: dict[str, Any], key: str) -> None:
    """Write ``sidecar``: ``doc``, what made the derived ``file`` and what it holds, sealed with ``key`` (everything
    that decided the file) and the file's own SHA-256."""
    write_sealed(sidecar, doc, f"{key} {file_sha256(file)}")


def read_description(file: Path, sidecar: Path, key: str) -> dict[str, Any] | None:
    """The description :func:`write_description` sealed for ``key`` while ``file`` still has the bytes it described,
    its ``path`` always ``file`` (a sidecar naming another file never makes a backend load that one); None where the
    file or the sidecar is missing, torn, edited, replaced or from other inputs: the caller derives both again."""
    try:
        digest = file_sha256(file)
    except OSError:
        return None
    doc = read_sealed(sidecar, f"{key} {digest}")
    return None if doc is None else {**doc, "path": str(file)}


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


#: The size of a configuration file (a sweep, targets, network profiles): a few KB in practice.
MAX_CONFIG_BYTES = 1 << 20


def yaml_file(path: Path, field: str, what: str, loader: type[BoundedLoader] | None = None) -> Any:
    """The YAML file at ``path`` (``what`` it should be, for the message); anything wrong is one
    :class:`~edgebench.errors.UsageError` naming ``field``: unreadable, too large, not UTF-8 text, not YAML."""
    from edgebench.parsing import BoundedLoader, yaml_text  # yaml: imported by the commands that read YAML only

    text = config_text(path, field, what)
    try:
        return yaml_text(text, loader or BoundedLoader)
    except ValueError as exc:
        raise UsageError(field, str(exc) if field == str(path) else f"{path}: {exc}") from None


def config_text(path: Path, field: str, what: str) -> str:
    """A configuration file's text: a regular file of at most :data:`MAX_CONFIG_BYTES`, UTF-8, no NUL (a FIFO, a
    device, a binary or a huge file is one :class:`~edgebench.errors.UsageError` naming ``field``)."""
    it = "" if field == str(path) else f"{path} "  # the line names the file once
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise UsageError(field, f"{it}is not a file; give {what}")
        if size > MAX_CONFIG_BYTES:
            raise UsageError(field, f"{it}is {size} bytes, not {what} (at most {MAX_CONFIG_BYTES} bytes)")
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise UsageError(field, f"{it}cannot be read ({exc.strerror or exc}); give {what}") from None
    except UnicodeDecodeError as exc:
        raise UsageError(
            field,
            f"{it}is not a text file in UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}): "
            f"give {what}, saved as UTF-8",
        ) from None
    if "\x00" in text:
        raise UsageError(field, f"{it}holds NUL bytes: a binary file, not {what}")
    return text
