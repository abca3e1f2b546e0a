"""Per-module forward and backward spans without full backward hooks, so in-place activations keep working.

Forward: each module's ``forward`` is wrapped to record when it starts and ends.

Backward: ``register_full_backward_hook`` wraps a module's inputs and outputs in a ``BackwardHookFunction``, and
an in-place op on its output (``ReLU(inplace=True)``, ``ReLU6(inplace=True)``) then fails ("a view ... is being
modified inplace" and kin).  Instead, after each *leaf* module's forward the tracer walks the autograd graph back
from the module's outputs and hooks every node the module created (``Node.register_prehook`` /
``Node.register_hook``): those fire when the autograd engine starts and finishes the node, without adding any
node to the graph.  A node belongs to the module when it is reachable from the module's outputs and was created
after the module's inputs, i.e. its sequence number is above the highest seen when the module started
(``AccumulateGrad`` nodes, whose number is the maximum, are left alone).

On CPU the engine runs one node at a time on the thread that called ``backward()``, in reverse creation order,
so the node executions form one sequence.  A module's backward spans are the maximal runs of consecutive node
executions that belong to it or to modules below it: leaf runs nest in their parents' runs by construction, and
time between the nodes of a run (engine bookkeeping, gradient accumulation, a container's own ops such as a
residual add) stays inside the enclosing module's span.  On CUDA the spans are host-side (kernel launches).

Cost, measured here on LeNet (14 modules, 13 hooked nodes): about 5 us per module call in forward, 4 us per leaf
for the graph walk and 12 us per hooked node (two registrations, two calls) in backward, about 0.3 ms a step;
``benchmarks/trace_overhead.py`` measures the ratio on whole trials.  The tracer's own time after a leaf's
forward falls outside that leaf's span, inside its parent's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from edgebench.tracing.spans import BACKWARD, FORWARD, SpanTable, span_table

_FWD_BEGIN, _FWD_END, _BWD_BEGIN, _BWD_END = 0, 1, 2, 3
_ACCUMULATE_GRAD_SEQ = 2**64 - 1


def module_labels(model: nn.Module) -> tuple[list[nn.Module], list[str], list[str], list[int]]:
    """Modules in registration order with their names, types and parent indices (the root is named by its class)."""
    modules: list[nn.Module] = []
    names: list[str] = []
    index: dict[int, int] = {}
    for name, module in model.named_modules():
        index[id(module)] = len(modules)
        modules.append(module)
        names.append(name or type(module).__name__)
    parents = [-1] * len(modules)
    for i, module in enumerate(modules):
        for child in module.children():
            j = index.get(id(child))
            if j is not None and parents[j] == -1 and j != 0:
                parents[j] = i
    return modules, names, [type(m).__name__ for m in modules], parents


def output_tensors(output: Any) -> Iterator[torch.Tensor]:
    """Tensors in a module's output: a tensor, or tensors inside tuples, lists and dicts (two levels)."""
    if isinstance(output, torch.Tensor):
        yield output
    elif isinstance(output, (tuple, list)):
        for item in output:
            if isinstance(item, torch.Tensor):
                yield item
            elif isinstance(item, (tuple, list)):
                yield from (t for t in item if isinstance(t, torch.Tensor))
    elif isinstance(output, dict):
        yield from output_tensors(tuple(output.values()))


def input_floor(args: tuple[Any, ...], floor: int) -> int:
    """The highest autograd sequence number among ``args``' grad_fns and ``floor``."""
    for arg in args:
        if isinstance(arg, torch.Tensor):
            fn = arg.grad_fn
            if fn is not None:
                seq = fn._sequence_nr()
                if floor < seq < _ACCUMULATE_GRAD_SEQ:
                    floor = seq
    return floor


def nodes_created_after(output: Any, floor: int) -> tuple[list[Any], int]:
    """Autograd nodes reachable from ``output`` created after sequence number ``floor``, and the highest one."""
    if isinstance(output, torch.Tensor):
        todo = [output.grad_fn] if output.grad_fn is not None else []
    else:
        todo = [t.grad_fn for t in output_tensors(output) if t.grad_fn is not None]
    found: list[Any] = []
    top = floor
    while todo:
        fn = todo.pop()
        seq = fn._sequence_nr()
        if seq <= floor or seq == _ACCUMULATE_GRAD_SEQ or fn in found:
            continue
        found.append(fn)
        if seq > top:
            top = seq
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                todo.append(nxt)
    return found, top


class LayerTracer:
    """Records forward and backward spans of every module of ``model`` while :attr:`recording` is on.

    Install before the warm-up (so every step runs with the tracer in place), switch recording on for the
    measured steps only (:meth:`start` / :meth:`stop`, between steps), then :meth:`table` turns the buffer into a
    :class:`SpanTable`.  Events are ``(code, label, t_ns)`` tuples appended to one list; nothing is written per
    layer per step.

    Each module's ``forward`` is wrapped through an instance attribute rather than forward hooks: a module with
    hooks takes ``nn.Module.__call__``'s slow path, which cost about twice the wrapper here.  :meth:`remove`
    deletes the attributes again.
    """

    def __init__(self, model: nn.Module, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.modules, self.names, self.types, self.parents = module_labels(model)
        self.leaf = [not any(True for _ in m.children()) for m in self.modules]
        self._clock = clock
        self._events: list[tuple[int, int, int]] = []
        self._wrapped: list[nn.Module] = []
        #: [recording, highest autograd sequence number seen in this forward]
        self._state: list[Any] = [False, -1]
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

    def _wrap(self, label: int, forward: Callable[..., Any]) -> Callable[..., Any]:
        append, clock, state = self._events.append, self._clock, self._state

        def backward_begin(grad_outputs: Any) -> None:
            append((_BWD_BEGIN, label, clock()))

        def backward_end(grad_inputs: Any, grad_outputs: Any) -> None:
            append((_BWD_END, label, clock()))

        if not self.leaf[label]:

            def container_forward(*args: Any, **kwargs: Any) -> Any:
                if not state[0]:
                    return forward(*args, **kwargs)
                append((_FWD_BEGIN, label, clock()))
                out = forward(*args, **kwargs)
                append((_FWD_END, label, clock()))
                # A container's own last op (a residual add) must not be claimed by the next leaf.
                state[1] = input_floor(tuple(output_tensors(out)), state[1])
                return out

            return container_forward

        def leaf_forward(*args: Any, **kwargs: Any) -> Any:
            if not state[0]:
                return forward(*args, **kwargs)
            floor = input_floor(args, state[1])
            append((_FWD_BEGIN, label, clock()))
            out = forward(*args, **kwargs)
            append((_FWD_END, label, clock()))
            nodes, state[1] = nodes_created_after(out, floor)
            for fn in nodes:
                fn.register_prehook(backward_begin)
                fn.register_hook(backward_end)
            return out

        return leaf_forward

    def table(self, costs: dict[str, Any] | None = None) -> SpanTable:
        """The recorded spans (forward per module call; backward as runs of node executions, see the module doc)."""
        rows = spans_from_events(self._events, self.parents, self.tid)
        return span_table(
            "layers",
            self.names,
            self.types,
            self.parents,
            rows,
            thread_names={self.tid: "worker main thread"},
            costs=costs,
            notes={
                "backward": "autograd node hooks on the nodes each leaf module creates (no full backward hooks)",
                "clock": "time.perf_counter_ns (CLOCK_MONOTONIC)",
            },
        )


def _chain(label: int, parents: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    out = [label]
    while parents[out[-1]] >= 0:
        out.append(parents[out[-1]])
    return tuple(reversed(out))


def spans_from_events(
    events: list[tuple[int, int, int]], parents: list[int] | tuple[int, ...], tid: int
) -> list[tuple[int, int, int, int, int]]:
    """``(label, kind, start_ns, end_ns, tid)`` rows from a tracer's event buffer.

    Forward begin/end events pair up as a stack.  Backward node executions (begin/end pairs) are grouped into
    runs per module chain; any forward event closes the open runs, so a run never spans two steps.
    """
    rows: list[tuple[int, int, int, int, int]] = []
    fwd_stack: list[tuple[int, int]] = []
    node_stack: list[tuple[int, int]] = []
    chains: dict[int, tuple[int, ...]] = {}
    open_runs: list[tuple[int, int]] = []  # (label, start) from the root down
    last_end = 0

    def close_from(depth: int) -> None:
        while len(open_runs) > depth:
            run_label, run_start = open_runs.pop()
            rows.append((run_label, BACKWARD, run_start, last_end, tid))

    for code, label, t in events:
        if code == _FWD_BEGIN:
            close_from(0)
            fwd_stack.append((label, t))
        elif code == _FWD_END:
            close_from(0)
            # Unwind to the matching begin (an exception inside a forward can leave inner begins unmatched).
            while fwd_stack:
                begin_label, begin_t = fwd_stack.pop()
                if begin_label == label:
                    rows.append((label, FORWARD, begin_t, t, tid))
                    break
        elif code == _BWD_BEGIN:
            node_stack.append((label, t))
        elif code == _BWD_END and node_stack:
            node_label, begin_t = node_stack.pop()
            chain = chains.get(node_label)
            if chain is None:
                chain = chains[node_label] = _chain(node_label, parents)
            common = 0
            while common < len(open_runs) and common < len(chain) and open_runs[common][0] == chain[common]:
                common += 1
            close_from(common)
            open_runs.extend((c, begin_t) for c in chain[common:])
            last_end = max(last_end, t)
    close_from(0)
    return rows
