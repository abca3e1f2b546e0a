"""Per-module forward and backward spans without full backward hooks, so in-place activations keep working.

Forward: each module's ``forward`` is wrapped to record when it starts and ends.

Backward: ``register_full_backward_hook`` wraps a module's inputs and outputs in a ``BackwardHookFunction``, and
an in-place op on its output (``ReLU(inplace=True)``, ``ReLU6(inplace=True)``) then fails ("a view ... is being
modified inplace" and kin).  Instead, after each module call the tracer walks the autograd graph back from the
call's outputs and puts a pre-hook (``Node.register_prehook``) on every node the call created and no module below
it claimed: the leaf's own ops, and a container's own ops such as a residual add.  A node belongs to a call when
it is reachable from the call's outputs and was created after its inputs (its sequence number is above the highest
seen when the call started); ``AccumulateGrad`` nodes, numbered the maximum, are left alone.  Nothing is added to
the graph, so in-place ops are untouched.

On CPU the engine runs one node at a time on the thread that called ``backward()``, so the node executions form
one sequence and a node runs from its pre-hook to the next node's.  Only *exit* nodes, which feed no other node of
the model's forward (the first layer's, the end of a branch), also get a post-hook (``Node.register_hook``), so the
last node's end is known without paying a second hook on every node.  A module's backward spans are the maximal
runs of consecutive node executions that belong to it or to modules below it: leaf runs nest in their parents' by
construction, and time between nodes (engine bookkeeping, gradient accumulation into ``.grad``) counts to the node
before it.  On CUDA the spans are host-side (kernel launches).

Cost: a few microseconds per module call in forward plus the graph walk, and one hook registration and call per
node in backward.  Each Python call between kernels also lengthens a gap in which OpenMP worker threads may fall
asleep, so with several threads a hook costs more than its Python time: one hook per node rather than two halved
the overhead on mobilenet_v2 here.  ``benchmarks/trace_overhead.py`` measures what the tracer adds to a step.  The
tracer's own time after a module's forward falls outside that module's span, inside its parent's.

The module labels and the claiming of autograd nodes are the model graph's (:mod:`edgebench.graph.modules`), shared
with the static counters there (FLOPs and bytes per module, the cut graph); what this module adds is the run-time
part of a traced trial: the clock readings and the spans they make.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from torch import nn

from edgebench.graph.modules import claim_nodes, input_floor, module_labels
from edgebench.records.spans import BACKWARD, FORWARD, SpanTable, span_table

_FWD_BEGIN, _FWD_END, _BWD_BEGIN, _BWD_END = 0, 1, 2, 3


class LayerTracer:
    """Records forward and backward spans of every module of ``model`` while :attr:`recording` is on.

    Install before the warm-up (so every step runs with the tracer in place), switch recording on for the
    measured steps only (:meth:`start` / :meth:`stop`, between steps), then :meth:`table` turns the buffer into a
    :class:`SpanTable`.  Events are two ints each appended to one list; nothing is written per layer per step.

    Each module's ``forward`` is wrapped through an instance attribute rather than forward hooks: a module with
    hooks takes ``nn.Module.__call__``'s slow path, which cost about twice the wrapper here.  :meth:`remove`
    deletes the attributes again.
    """

    def __init__(self, model: nn.Module, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.modules, self.names, self.types, self.parents = module_labels(model)
        self.leaf = [not any(True for _ in m.children()) for m in self.modules]
        self._clock = clock
        #: Flat ``[label * 4 + code, t_ns, ...]``: plain ints, so recording allocates nothing the garbage
        #: collector has to track (tuples would make each collection walk a growing buffer).
        self._events: list[int] = []
        self._wrapped: list[nn.Module] = []
        #: [recording, highest autograd sequence number seen, the number below which nodes precede this forward]
        self._state: list[Any] = [False, -1, -1]
        #: node -> frontier of the call that claimed it, for the forward in progress (cleared per model call)
        self._owned: dict[Any, list[Any]] = {}
        self.tid = threading.get_native_id()

    @property
    def recording(self) -> bool:
        return bool(self._state[0])

    def install(self) -> LayerTracer:
        for label, module in enumerate(self.modules):
            if "forward" in module.__dict__:
                continue  # already wrapped (a module registered twice) or patched by someone else: leave it
            module.forward = self._wrap(label, module.forward)  # type: ignore[method-assign]
            self._wrapped.append(module)
        return self

    def remove(self) -> None:
        for module in self._wrapped:
            del module.forward
        self._wrapped = []

    def start(self) -> None:
        self._state[0] = True

    def stop(self) -> None:
        self._state[0] = False
        self._owned.clear()

    def _wrap(self, label: int, forward: Callable[..., Any]) -> Callable[..., Any]:
        append, clock, state, owned = self._events.append, self._clock, self._state, self._owned
        is_model = label == 0
        fwd_begin, fwd_end = label * 4 + _FWD_BEGIN, label * 4 + _FWD_END
        bwd_begin, bwd_end = label * 4 + _BWD_BEGIN, label * 4 + _BWD_END

        def backward_begin(grad_outputs: Any) -> None:
            append(bwd_begin)
            append(clock())

        def backward_end(grad_inputs: Any, grad_outputs: Any) -> None:
            append(bwd_end)
            append(clock())

        def hook(fn: Any, is_exit: bool) -> None:
            fn.register_prehook(backward_begin)
            if is_exit:  # the next node's start ends the others; an exit may have no next node
                fn.register_hook(backward_end)

        def traced_forward(*args: Any, **kwargs: Any) -> Any:
            if not state[0]:
                return forward(*args, **kwargs)
            floor = input_floor(args, state[1])
            if is_model:
                owned.clear()
                state[2] = floor
            append(fwd_begin)
            append(clock())
            out = forward(*args, **kwargs)
            append(fwd_end)
            append(clock())
            state[1] = claim_nodes(out, floor, state[2], owned, hook)
            return out

        return traced_forward

    def events(self) -> list[tuple[int, int, int]]:
        """The recorded events as ``(code, label, t_ns)``."""
        keys, times = self._events[0::2], self._events[1::2]
        return [(key & 3, key >> 2, t) for key, t in zip(keys, times, strict=True)]

    def clear(self) -> None:
        del self._events[:]

    def table(self, costs: dict[str, Any] | None = None) -> SpanTable:
        """The recorded spans (forward per module call; backward as runs of node executions, see the module doc)."""
        rows = spans_from_events(self.events(), self.parents, self.tid)
        table = span_table(
            "layers",
            self.names,
            self.types,
            self.parents,
            rows,
            thread_names={self.tid: "worker main thread"},
            costs=costs,
            notes={
                "backward": "autograd node pre-hooks on the nodes each module creates (no full backward hooks)",
                "clock": "time.perf_counter_ns (CLOCK_MONOTONIC)",
            },
        )
        readings = getattr(self._clock, "readings", None)
        if readings is None:
            return table
        return counted(table, self._clock.names, readings)  # type: ignore[attr-defined]


class CountingClock:
    """A clock that also reads perf counters at every tick, so each span's counts are the readings at its two
    ends (the spans' times are exactly the ticks); the reads run inside the spans and are counted in them."""

    def __init__(self, counters: Any, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.names: tuple[str, ...] = counters.names
        self.readings: dict[int, tuple[int, ...]] = {}
        self._read, self._clock = counters.read, clock

    def __call__(self) -> int:
        t = self._clock()
        self.readings[t] = self._read()
        return t


def counted(table: SpanTable, names: tuple[str, ...], readings: dict[int, tuple[int, ...]]) -> SpanTable:
    """``table`` with each span's counter deltas (a span whose end was not a tick, none seen: 0)."""
    zero = (0,) * len(names)
    starts = np.asarray([readings.get(int(t), zero) for t in table.start_ns], dtype=np.int64).reshape(-1, len(names))
    ends = np.asarray([readings.get(int(t), zero) for t in table.end_ns], dtype=np.int64).reshape(-1, len(names))
    deltas = np.clip(ends - starts, 0, None)
    return replace(table, counters={name: deltas[:, i].copy() for i, name in enumerate(names)})


def _chain(label: int, parents: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    out = [label]
    while parents[out[-1]] >= 0:
        out.append(parents[out[-1]])
    return tuple(reversed(out))


def spans_from_events(
    events: list[tuple[int, int, int]], parents: list[int] | tuple[int, ...], tid: int
) -> list[tuple[int, int, int, int, int]]:
    """``(label, kind, start_ns, end_ns, tid)`` rows from a tracer's event buffer.

    Forward begin/end events pair up as a stack.  A backward node runs from its pre-hook until the next node's
    pre-hook, or until its own post-hook for an exit node; node executions are grouped into runs per module chain,
    and any forward event closes the open runs, so a run never spans two steps.  A last node whose end was never
    seen (no exit hook fired) gets no time rather than the optimizer's.
    """
    rows: list[tuple[int, int, int, int, int]] = []
    fwd_stack: list[tuple[int, int]] = []
    chains: dict[int, tuple[int, ...]] = {}
    open_runs: list[tuple[int, int]] = []  # (label, start) from the root down
    last_end = 0
    pending: tuple[int, int] | None = None  # the node running: (label, start)

    def close_from(depth: int) -> None:
        while len(open_runs) > depth:
            run_label, run_start = open_runs.pop()
            rows.append((run_label, BACKWARD, run_start, last_end, tid))

    def node_ran(node_label: int, start: int, end: int) -> None:
        nonlocal last_end
        chain = chains.get(node_label)
        if chain is None:
            chain = chains[node_label] = _chain(node_label, parents)
        common = 0
        while common < len(open_runs) and common < len(chain) and open_runs[common][0] == chain[common]:
            common += 1
        close_from(common)
        open_runs.extend((c, start) for c in chain[common:])
        last_end = max(last_end, end)

    for code, label, t in events:
        if code in (_BWD_BEGIN, _BWD_END):
            if pending is not None:
                node_ran(pending[0], pending[1], t)
            pending = (label, t) if code == _BWD_BEGIN else None
            continue
        if pending is not None:
            node_ran(pending[0], pending[1], pending[1])
            pending = None
        close_from(0)
        if code == _FWD_BEGIN:
            fwd_stack.append((label, t))
        else:
            # Unwind to the matching begin (an exception inside a forward can leave inner begins unmatched).
            while fwd_stack:
                begin_label, begin_t = fwd_stack.pop()
                if begin_label == label:
                    rows.append((label, FORWARD, begin_t, t, tid))
                    break
    if pending is not None:
        node_ran(pending[0], pending[1], pending[1])
    close_from(0)
    return rows
