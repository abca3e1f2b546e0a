"""SIGTERM handled as Ctrl-C, so that every ``finally`` runs (frequencies restored, temporary folders removed).

Python's default for SIGTERM ends the process at once, skipping all cleanup; a supervisor, ``timeout`` or ``kill``
sends SIGTERM, and it must leave the device as Ctrl-C does.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the sweep is, so that every ``finally`` (frequency restore) runs as for Ctrl-C."""


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
