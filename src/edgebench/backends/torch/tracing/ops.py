"""Aten-op spans from torch.profiler, converted to the same span table as the layer tracer.

The profiler records every aten op (and the autograd engine's ``evaluate_function`` scopes and the optimizer's
``Optimizer.step``) with start and end on the wall clock (``CLOCK_REALTIME``); the conversion moves them onto the
monotonic clock of the step events and the sampler with an offset measured when the profiler starts and stops.
An op is *backward* when it runs inside an ``autograd::engine::evaluate_function`` scope and *optimizer* inside
an ``Optimizer.*`` scope; otherwise forward (which includes the loss).

The profiler costs far more per op than the layer tracer (a few microseconds per op, many ops per layer), so
``--trace ops`` is for finding which kernels dominate, not for step times; use ``--trace layers`` for those.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from edgebench.records.spans import BACKWARD, FORWARD, OPTIMIZER, SpanTable, span_table

_BACKWARD_SCOPE = "autograd::engine::evaluate_function"
_OPTIMIZER_SCOPE = "Optimizer."


def realtime_offset_ns(tries: int = 7) -> tuple[int, int]:
    """``CLOCK_REALTIME - CLOCK_MONOTONIC`` in ns and its uncertainty (the tightest bracket of several reads)."""
    best: tuple[int, int] | None = None
    for _ in range(tries):
        t1 = time.perf_counter_ns()
        real = time.time_ns()
        t2 = time.perf_counter_ns()
        if best is None or t2 - t1 < best[1]:
            best = (real - (t1 + t2) // 2, t2 - t1)
    assert best is not None
    return best


class OpTracer:
    """Same interface as :class:`~edgebench.backends.torch.tracing.layers.LayerTracer`: profiles between :meth:`start`
    and :meth:`stop` and returns a :class:`SpanTable` of aten ops."""

    def __init__(self) -> None:
        self._profile: Any = None
        self._offsets: list[tuple[int, int]] = []
        self.tid = threading.get_native_id()

    def install(self) -> OpTracer:
        return self

    def remove(self) -> None:
        pass

    def start(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        self._offsets.append(realtime_offset_ns())
        self._profile = profile(activities=[ProfilerActivity.CPU], record_shapes=False, with_stack=False)
        self._profile.start()

    def stop(self) -> None:
        self._profile.stop()
        self._offsets.append(realtime_offset_ns())

    def table(self, costs: dict[str, Any] | None = None) -> SpanTable:
        offset = sum(o for o, _ in self._offsets) // max(len(self._offsets), 1)
        raw = [
            (e.name(), e.start_ns() - offset, e.end_ns() - offset, e.start_thread_id())
            for e in self._profile.profiler.kineto_results.events()
            if str(e.device_type()).endswith("CPU") and e.end_ns() > e.start_ns()
        ]
        return ops_table(raw, self.tid, notes={"clock_offset_ns": offset, "offsets": self._offsets})


def ops_table(raw: list[tuple[str, int, int, int]], main_tid: int, notes: dict[str, Any] | None = None) -> SpanTable:
    """Span table from ``(name, start_ns, end_ns, profiler_thread)`` on the monotonic clock.

    The profiler's thread with the most events is the worker's main thread (training runs there, and so does the
    CPU autograd engine); any other keeps its profiler id, offset so it cannot collide with a real thread id.
    """
    by_thread = Counter(thread for *_, thread in raw)
    main = by_thread.most_common(1)[0][0] if by_thread else 0
    tids = {thread: main_tid if thread == main else 1_000_000_000 + thread for thread in by_thread}
    names: list[str] = []
    index: dict[str, int] = {}
    rows: list[tuple[int, int, int, int, int]] = []
    for name, start, end, thread in sorted(raw, key=lambda r: (r[3], r[1], -r[2])):
        if name not in index:
            index[name] = len(names)
            names.append(name)
        rows.append((index[name], FORWARD, start, end, tids[thread]))
    rows = _assign_kinds(rows, names)
    return span_table(
        "ops",
        names,
        ["scope" if n.startswith((_BACKWARD_SCOPE, _OPTIMIZER_SCOPE)) else "op" for n in names],
        [-1] * len(names),
        rows,
        thread_names={
            tid: "worker main thread" if tid == main_tid else f"profiler thread {t}" for t, tid in tids.items()
        },
        notes={"source": "torch.profiler (CPU activities)", **(notes or {})},
    )


def _assign_kinds(rows: list[tuple[int, int, int, int, int]], names: list[str]) -> list[tuple[int, int, int, int, int]]:
    """Backward/optimizer for ops nested in those scopes; rows must be sorted by thread, start, -end."""
    out: list[tuple[int, int, int, int, int]] = []
    stack: list[tuple[int, int, int]] = []  # (end, kind, tid)
    for label, _, start, end, tid in rows:
        while stack and (stack[-1][2] != tid or stack[-1][0] <= start):
            stack.pop()
        name = names[label]
        if name.startswith(_BACKWARD_SCOPE):
            kind = BACKWARD
        elif name.startswith(_OPTIMIZER_SCOPE):
            kind = OPTIMIZER
        else:
            kind = stack[-1][1] if stack else FORWARD
        out.append((label, kind, start, end, tid))
        stack.append((end, kind, tid))
    return out
