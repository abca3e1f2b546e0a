"""``--trace layers`` on ONNX Runtime: ORT's own profiler, read back into the span table the torch tracing writes.

ORT's profiler (``SessionOptions.enable_profiling``) writes, per ``run``, a ``model_run`` event and one
``<node>_kernel_time`` event per executed node (microseconds since the profiler started, on the system clock).
Each kernel becomes a span labelled by its node under the module the TorchScript exporter named it after
(:func:`edgebench.graph.scopes.module_of_node`); module spans are the contiguous stretches of their nodes,
the root span is the ``model_run``, so spans nest as a call stack and ``edgebench layers``, the trace and the
partition analyzer read them as they read torch's.  Only runs inside the measured steps are kept.

Fused nodes: ORT's optimiser replaces node groups (Conv + BatchNorm + ReLU, the NCHWc layout, QDQ -> QLinearConv)
by nodes it names after the last node absorbed (``/stem/stem.2/Relu_output_0_nchwc`` runs a ``Conv``), so a
kernel whose op differs from that graph node's, or whose name is not in the graph, is typed ``<op> (fused)`` and
sits under the module of the graph node of its op found walking back from the node it was named after
(:meth:`Graph.origin`: the ``Conv`` of ``stem.0``).  FLOPs are not counted (ORT reports none): ``costs`` is null.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.graph.scopes import module_of_node
from edgebench.records.spans import FORWARD, SpanTable, span_table

if TYPE_CHECKING:
    from edgebench.backends.onnxruntime.session import OrtSession

#: Suffixes ORT appends to the node it derives from another (layout changes, fused outputs, inserted copies).
_DERIVED = re.compile(r"(_(output|input)_\d+)?(_nchwc|_token_\d+|_Q|_DQ|_QuantizeLinear|_DequantizeLinear)*$")
#: Runtime op prefixes over the graph op they compute: ``FusedConv``, ``QLinearConv``, ``NchwcConv``...
_CORE_OP = re.compile(r"^(QLinear|Fused|Nchwc|DynamicQuantize)")


@dataclass(frozen=True)
class ClockPair:
    """The system clock (ORT's profiler) and the monotonic clock (step events) read at one moment."""

    epoch_ns: int
    perf_ns: int

    @classmethod
    def now(cls) -> ClockPair:
        """The pair from the tightest of several brackets of a system-clock read between two monotonic ones
        (:func:`edgebench.backends.torch.tracing.ops.realtime_offset_ns`, torch's op tracer's too): a process
        preempted between two plain reads (a CFS time slice is 3-4 ms on a busy machine) paired them milliseconds
        apart, and every ORT span was then shifted by that much against the step windows."""
        from edgebench.backends.torch.tracing.ops import realtime_offset_ns  # no torch: the module imports none

        offset_ns, _ = realtime_offset_ns()
        perf_ns = time.perf_counter_ns()
        return cls(perf_ns + offset_ns, perf_ns)

    def to_perf(self, epoch_ns: int) -> int:
        return epoch_ns - self.epoch_ns + self.perf_ns


@dataclass(frozen=True)
class Graph:
    """The ONNX file the session loaded, before ORT rewrote it: each node's op and the nodes feeding it."""

    ops: dict[str, str]
    inputs: dict[str, list[str]]
    #: Node -> the nodes reading its outputs.
    consumers: dict[str, list[str]]

    @classmethod
    def load(cls, model_path: str) -> Graph:
        import onnx

        nodes = onnx.load(model_path, load_external_data=False).graph.node
        producer = {out: node.name for node in nodes for out in node.output}
        inputs = {node.name: [producer[i] for i in node.input if i in producer] for node in nodes}
        consumers: dict[str, list[str]] = {}
        for node, feeding in inputs.items():
            for source in feeding:
                consumers.setdefault(source, []).append(node)
        return cls(ops={node.name: node.op_type for node in nodes}, inputs=inputs, consumers=consumers)

    def base(self, name: str) -> str:
        """The graph node a runtime node derives from: itself, or its name without ORT's suffixes."""
        if name in self.ops:
            return name
        stripped = _DERIVED.sub("", name)
        return stripped if stripped in self.ops else stripped or name

    def origin(self, name: str, runtime_op: str) -> str:
        """The graph node whose work a runtime node does: a fused node is named after the last node it absorbed
        (a ReLU, a QuantizeLinear), so walk back through its inputs (a few nodes) to one of the runtime's op."""
        base = self.base(name)
        core = _CORE_OP.sub("", runtime_op)
        frontier, seen = [base], {base}
        for _ in range(4):
            for node in frontier:
                if self.ops.get(node) == core:
                    return node
            frontier = [p for node in frontier for p in self.inputs.get(node, []) if p not in seen]
            seen.update(frontier)
        return base

    def module(self, name: str, runtime_op: str, modules: dict[str, str]) -> str | None:
        """The module of :meth:`origin`; for a node the exporter did not name after a scope (a weight's
        DequantizeLinear, named after its initializer), the module of the first node reading its output."""
        origin = self.origin(name, runtime_op)
        if origin.startswith("/"):  # scope-named by the exporter: a node outside every module is the root's
            return module_of_node(origin, modules)
        frontier, seen = [origin], {origin}
        for _ in range(3):
            for node in frontier:
                module = module_of_node(node, modules)
                if module is not None:
                    return module
            frontier = [c for node in frontier for c in self.consumers.get(node, []) if c not in seen]
            seen.update(frontier)
        return None


def profile_table(
    events: list[dict[str, Any]],
    start_epoch_ns: int,
    clock: ClockPair,
    window_ns: tuple[int, int],
    graph: Graph,
    modules: dict[str, str],
    root: str,
    tid: int,
) -> SpanTable:
    """The layer span table of the ``model_run``s inside ``window_ns`` (monotonic clock)."""
    names, types, parents = [root], [root], [-1]
    index: dict[str, int] = {"": 0}

    def label(key: str, name: str, kind: str, parent: int) -> int:
        if key not in index:
            index[key] = len(names)
            names.append(name)
            types.append(kind)
            parents.append(parent)
        return index[key]

    def module_label(qual: str | None) -> list[int]:
        """Labels of ``qual`` and its ancestors, root first."""
        chain = [0]
        if not qual:
            return chain
        parts = qual.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in modules:
                chain.append(label(prefix, prefix, modules[prefix], chain[-1]))
        return chain

    def perf(ts_us: float) -> int:
        return clock.to_perf(start_epoch_ns + int(ts_us * 1000))

    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    kernels = sorted(
        (e for e in events if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")),
        key=lambda e: e["ts"],
    )
    rows: list[tuple[int, int, int, int, int]] = []
    fused = 0
    for run in runs:
        start, end = perf(run["ts"]), perf(run["ts"] + run["dur"])
        if not (window_ns[0] <= (start + end) // 2 <= window_ns[1]):
            continue
        rows.append((0, FORWARD, start, end, tid))
        open_spans: list[list[int]] = []  # [label, start, end] per open module, outermost first
        for kernel in (k for k in kernels if run["ts"] <= k["ts"] <= run["ts"] + run["dur"]):
            node = kernel["name"][: -len("_kernel_time")]
            op = str(kernel.get("args", {}).get("op_name", "?"))
            is_fused = graph.ops.get(node) != op
            fused += is_fused
            module = graph.module(node, op, modules)
            chain = module_label(module)[1:]
            k_start, k_end = perf(kernel["ts"]), perf(kernel["ts"] + kernel["dur"])
            keep = 0
            while keep < min(len(open_spans), len(chain)) and open_spans[keep][0] == chain[keep]:
                keep += 1
            for closed in open_spans[keep:]:
                rows.append((closed[0], FORWARD, closed[1], closed[2], tid))
            open_spans = open_spans[:keep] + [[m, k_start, k_end] for m in chain[keep:]]
            for span in open_spans:
                span[2] = max(span[2], k_end)
            parent = chain[-1] if chain else 0
            kind = f"{op} (fused)" if is_fused else op
            short = node.rsplit("/", 1)[-1]
            name = f"{module}/{short}" if module else short
            rows.append((label(f"node:{node}", name, kind, parent), FORWARD, k_start, k_end, tid))
        for closed in open_spans:
            rows.append((closed[0], FORWARD, closed[1], closed[2], tid))
    return span_table(
        "layers",
        names,
        types,
        parents,
        rows,
        thread_names={tid: "worker main"},
        notes={
            "source": "onnxruntime profiler (enable_profiling): per-node kernel times, sequential executor",
            "labels": "ONNX nodes (module/node) under the modules their exported names point to; a fused node "
            "sits under the module of the graph node of its op it absorbed (a Conv+ReLU under the Conv)",
            "fused_kernel_runs": fused,
            "costs": "not counted: ORT reports no FLOPs",
        },
    )


class ProfileRecorder:
    """The worker's :class:`~edgebench.backends.base.TraceRecording` for an ORT session with profiling on."""

    def __init__(self, session: OrtSession, tid: int) -> None:
        self.session = session
        self.tid = tid
        self.window: list[int] = []
        self.clock = ClockPair.now()

    def counting(self, step: Callable[[], Any]) -> Callable[[], Any]:
        return step  # no FLOP count: ORT reports none

    def ensure_costs(self, step: Callable[[], Any]) -> None:
        pass

    def start(self) -> None:
        self.clock = ClockPair.now()
        self.window = [time.perf_counter_ns()]

    def stop(self) -> None:
        self.window.append(time.perf_counter_ns())

    def remove(self) -> None:
        pass

    def table(self) -> SpanTable:
        session = self.session
        start_epoch_ns = session.session.get_profiling_start_time_ns()
        events = json.loads(Path(session.session.end_profiling()).read_text())
        return profile_table(
            events,
            start_epoch_ns,
            self.clock,
            (self.window[0], self.window[-1]),
            Graph.load(session.model_path),
            session.modules,
            session.root_class,
            self.tid,
        )

    def save(self, path: str) -> int:
        table = self.table()
        tmp = Path(path).with_suffix(".tmp")
        tmp.write_text(table.to_json())
        tmp.replace(path)
        return len(table)
