"""MNN's C++ code prints with plain ``printf`` to file descriptor 1 (``The device supports: ...`` at import,
the converter's progress, shape warnings).  Python's ``sys.stdout`` never sees it, so ``contextlib.redirect_stdout``
does not help: :func:`stdout_to_stderr` moves file descriptor 1 itself, so a ``--json`` document or the
worker's handshake on stdout is never interleaved with MNN's text.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Inside the block, whatever is written to fd 1 (C or Python) goes to fd 2; fd 1 is restored after."""
    with contextlib.suppress(ValueError, OSError):
        sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        with contextlib.suppress(ValueError, OSError):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextlib.contextmanager
def fd_output_to(path: str) -> Iterator[None]:
    """Inside the block, fds 1 and 2 both write to ``path`` (to read the converter's reasons after a failure)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):
            stream.flush()
    saved = os.dup(1), os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(target, 1)
        os.dup2(target, 2)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError, OSError):
                stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, target):
            os.close(fd)


def import_mnn():  # type: ignore[no-untyped-def]
    """``import MNN`` with its import-time print kept off stdout."""
    with stdout_to_stderr():
        import MNN

    return MNN
