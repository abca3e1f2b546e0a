"""Timing a backend's model load: the cold-start figure an app meets before its first inference.

Each backend wraps the section that turns a model (file or factory) into something runnable in :func:`timing_load`
and keeps the record as its session's ``model_load``; the worker reports it in its ``ready`` event.  Why the
backend and not the worker: what "loading" means differs (ORT's ``InferenceSession``, MNN's interpreter and
session, torch's model construction and move to the device), and the framework's import and the model's
preparation (export, conversion: a build step, not an app's start) must stay outside it.  A backend that times
nothing gets the worker's own timing of its whole session opening, labelled as such.

Peak memory is the kernel's high-water mark of resident memory (``VmHWM``), reset first through
``/proc/self/clear_refs`` (``5``) so that it is the load's own; where the reset is refused the peak is the process's
since it began, and the record says so.  The worker resets it again before the measured steps.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from edgebench.host.sysfs import SysFS
from edgebench.records.events import ModelLoad
from edgebench.sensors.process import read_status_kib


class LoadTiming:
    """Filled when the ``with`` block of :func:`timing_load` ends; ``record`` is then the load's figures."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.record: ModelLoad | None = None


def _kib(proc: SysFS, key: str) -> int | None:
    return read_status_kib(proc, "self", key)


@contextmanager
def timing_load(what: str, proc: SysFS | None = None) -> Iterator[LoadTiming]:
    """Time the block as the model's load (``what`` names it in the record) and read its peak resident memory."""
    proc = proc or SysFS("/")
    timing = LoadTiming(what)
    before_kib = _kib(proc, "VmRSS")
    try:
        proc.write_text("/proc/self/clear_refs", "5")
        since = "load"
    except OSError:
        since = "process start"
    start = time.perf_counter_ns()
    yield timing
    seconds = (time.perf_counter_ns() - start) / 1e9
    peak_kib = _kib(proc, "VmHWM")
    added = None if peak_kib is None or before_kib is None else max(peak_kib - before_kib, 0) * 1024
    timing.record = ModelLoad(
        seconds=seconds,
        peak_memory_bytes=None if peak_kib is None else peak_kib * 1024,
        added_memory_bytes=added,
        what=what,
        peak_since=since,  # type: ignore[arg-type]
    )
