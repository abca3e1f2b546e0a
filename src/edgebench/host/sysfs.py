"""The one place edgebench reads ``/proc`` and ``/sys``.

Every sensor and every host query goes through a :class:`SysFS` rooted at ``/`` on a live device, or at a
directory copied from a real board (``tests/fixtures/sysfs/<board>/``, or a capture a user brings with
``--sysfs-root``).  Keeping the root explicit is what lets a Jetson or a phone be tested on a laptop without
patching ``open``.
"""

from __future__ import annotations

import glob as _glob
import os
import re
from pathlib import Path

_DIGITS = re.compile(r"(\d+)")


class SysFS:
    """Read-only (plus the few deliberate writes placement needs) view of a device's pseudo-files."""

    #: How to get the root that writing controls needs, where it is not ``sudo`` on this machine (a remote device).
    root_hint: str | None = None
    #: Whether these are files of this machine (``/`` or a copied tree here), which a journal kept here can put back
    #: after a crash; a remote device's view keeps its own restore script on the device.
    is_local = True

    def __init__(self, root: str | os.PathLike[str] = "/") -> None:
        self.root = Path(root)

    @property
    def is_live(self) -> bool:
        """True when this view is the running machine itself, so ``/proc/<pid>`` of our children exists."""
        return self.root.resolve() == Path("/")

    def path(self, rel: str) -> Path:
        """Absolute path of ``rel`` (written as on the device, e.g. ``/proc/stat``) under the root."""
        return self.root / rel.lstrip("/")

    def exists(self, rel: str) -> bool:
        return self.path(rel).exists()

    def read_text(self, rel: str) -> str:
        """Whole file as text; raises ``OSError`` (``FileNotFoundError``, ``PermissionError``) as the kernel does."""
        with open(self.path(rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    def read_str(self, rel: str, default: str | None = None) -> str | None:
        """First line stripped, or ``default`` when the file is missing or unreadable."""
        try:
            return self.read_text(rel).strip()
        except OSError:
            return default

    def read_int(self, rel: str, default: int | None = None) -> int | None:
        """Integer content (sysfs attributes hold one number), or ``default`` when absent or not a number."""
        text = self.read_str(rel)
        if text is None:
            return default
        try:
            return int(text.split()[0])
        except (ValueError, IndexError):
            return default

    def glob(self, pattern: str) -> list[str]:
        """Device paths (``/sys/...``) matching ``pattern``, sorted naturally (``cpu2`` before ``cpu10``)."""
        root = str(self.root)
        hits = ("/" + os.path.relpath(h, root) for h in _glob.glob(str(self.path(pattern))))
        return sorted(hits, key=natural_key)

    def open(self, rel: str) -> PseudoFile:
        """Keep ``rel`` open for repeated reads: re-reading an open descriptor is what keeps a 10 ms sampler cheap."""
        return PseudoFile(self.path(rel))

    def writable(self, rel: str) -> bool:
        """Whether :meth:`write_text` may write ``rel`` (a remote device answers through its root wrapper)."""
        return os.access(self.path(rel), os.W_OK)

    def restored(self) -> None:
        """Every control written is back to its old value; a remote device drops its own restore record."""

    def write_text(self, rel: str, value: str) -> None:
        """Write a control file (governor, clear_refs); raises ``PermissionError`` when not allowed."""
        with open(self.path(rel), "w", encoding="ascii") as f:
            f.write(value)


def natural_key(text: str) -> list[int | str]:
    """Sort key that orders embedded numbers numerically: ``cpu2`` < ``cpu10``."""
    return [int(part) if part.isdigit() else part for part in _DIGITS.split(text)]


class PseudoFile:
    """An open ``/proc`` or ``/sys`` file re-read from offset 0 with one ``pread`` per call."""

    __slots__ = ("_fd", "path")

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDONLY)

    def read(self, size: int = 65536) -> bytes:
        return os.pread(self._fd, size, 0)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> PseudoFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def whole_lines_within(blobs: list[bytes], max_bytes: int) -> bytes:
    """The lines of ``blobs`` one after another (each blob ends its last line), as many whole lines as stay under
    ``max_bytes``: how every sampler reads a pattern source (the sh loop and the native sampler alike)."""
    out: list[bytes] = []
    used = 0
    for blob in blobs:
        for line in blob.splitlines():
            if used + len(line) + 1 >= max_bytes:
                return b"".join(out)
            out.append(line + b"\n")
            used += len(line) + 1
    return b"".join(out)


class PatternFiles:
    """Every file a pattern matches (``/proc/<pid>/task/*/schedstat``: one per thread), listed again and read whole
    at each call, their lines one after another: a process's threads come and go between two ticks.  A read with no
    file left to read (the process gone) raises ``FileNotFoundError``, a failed read as for one file."""

    __slots__ = ("path", "sysfs")

    def __init__(self, sysfs: SysFS, pattern: str) -> None:
        self.sysfs = sysfs
        self.path = pattern

    def read(self, size: int = 65536) -> bytes:
        blobs = []
        for hit in sorted(self.sysfs.glob(self.path)):
            try:
                with open(self.sysfs.path(hit), "rb") as f:
                    blobs.append(f.read(size))
            except OSError:
                continue  # a thread that ended between the listing and the read
        if not blobs:
            raise FileNotFoundError(2, "no file matches", self.path)
        return whole_lines_within(blobs, size)

    def close(self) -> None:
        return None

    def __enter__(self) -> PatternFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
