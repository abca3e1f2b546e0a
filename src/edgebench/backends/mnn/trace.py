"""Layer traces of MNN trials, in the span table every view reads (``edgebench layers``, the trace, partitions).

Inference: each measured step runs through ``Interpreter.runSessionWithCallBackInfo``, whose begin and end
callbacks give every op's name, type and FLOPs.  Op names are the ONNX nodes' output names
(``/features/features.0/Conv_output_0``), which :func:`edgebench.graph.scopes.module_of_node` maps back to
the torch module the node ran in; the labels are the torch model's module tree (as the torch tracer writes it)
with each op a child of its module.  A module's spans are the maximal runs of consecutive ops inside it, so they
nest and exclusive times add up.  Costs are counted on the first (warm-up) step: forward FLOPs = 2 x MNN's
per-op multiply-adds (``OpInfo.getFlops`` is in millions of multiply-adds), bytes = the op's input and output
tensors as float32.  The callbacks cost a Python call per op boundary, so a traced step is slower than an
untraced one.

Training: MNN's Python training API has no per-op callback (the expression executor runs forward, backward and
update inside ``opt.step``), so a training trace holds two spans per step: the forward pass with the loss, and
backward with the update.  Per-layer training times are not measured on MNN; the table's notes say so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from edgebench.records.spans import BACKWARD, FORWARD, SpanTable, span_table

if TYPE_CHECKING:
    from edgebench.backends.mnn.session import MnnSession

_clock = time.perf_counter_ns  # the clock of the worker's step events

INFER_NOTE = (
    "MNN inference: one span per op from Interpreter.runSessionWithCallBackInfo, under the torch module its ONNX "
    "node came from; FLOPs = 2 x MNN's OpInfo multiply-adds, bytes = float32 inputs + outputs of each op"
)
TRAIN_NOTE = (
    "MNN training: MNN's Python training API exposes no per-op callback, so each step has two spans, the forward "
    "pass with the loss (forward) and MNN's optim.step, which runs backward and the update in one call (backward); "
    "per-layer training times are not measured on MNN"
)


def _tensor_bytes(tensors: Any) -> float:
    total = 0
    for tensor in tensors or ():
        try:
            total += int(np.prod(tensor.getShape())) * 4
        except Exception:  # a tensor MNN cannot describe (a raster's virtual input): not counted
            continue
    return float(total)


class _ModuleTree:
    """The torch model's module labels (written by the preparing child: this worker has no torch), plus one label
    per MNN op under its module."""

    def __init__(self, tree: dict[str, list[Any]]) -> None:
        self.names, self.types = list(tree["names"]), list(tree["types"])
        self.parents = [int(p) for p in tree["parents"]]
        self.index = {name: i for i, name in enumerate(self.names)}
        self.qualified = set(tree["qualified"])
        self.ops: dict[str, int] = {}

    def op_label(self, op_name: str, op_type: str) -> int:
        label = self.ops.get(op_name)
        if label is None:
            from edgebench.graph.scopes import module_of_node

            module = module_of_node(op_name, self.qualified)
            parent = self.index[module] if module is not None else 0
            label = len(self.names)
            self.names.append(op_name)
            self.types.append(op_type)
            self.parents.append(parent)
            self.ops[op_name] = label
        return label

    def chain(self, label: int) -> list[int]:
        """``label``'s ancestors, root first, then ``label``."""
        out = [label]
        while self.parents[out[-1]] >= 0:
            out.append(self.parents[out[-1]])
        return out[::-1]


class InferenceTraceRecorder:
    """Per-op spans of the measured inference steps, through MNN's per-op callbacks."""

    def __init__(self, session: MnnSession) -> None:
        self.session = session
        self.tree = _ModuleTree(session.module_tree)
        self.rows: list[tuple[int, int, int, int, int]] = []
        self.costs: dict[int, list[float]] = {}
        self.recording = False
        self._counted = False
        self._tid = 0

    def install(self) -> InferenceTraceRecorder:
        self.session._traced_run = self._run
        return self

    def _run(self) -> None:
        """One inference through the callbacks; records spans while recording, costs on the counting step."""
        tree = self.tree
        count = not self._counted
        ops: list[tuple[int, int, int]] = []
        start: dict[str, tuple[int, float]] = {}

        def begin(tensors: Any, info: Any) -> bool:
            start[info.getName()] = (_clock(), _tensor_bytes(tensors) if count else 0.0)
            return True

        def end(tensors: Any, info: Any) -> bool:
            t1 = _clock()
            name = info.getName()
            t0, in_bytes = start.pop(name, (t1, 0.0))
            label = tree.op_label(name, info.getType())
            ops.append((label, t0, t1))
            if count:
                flops = 2e6 * float(info.getFlops())
                cost = self.costs.setdefault(label, [0.0, 0.0])
                cost[0] += flops
                cost[1] += in_bytes + _tensor_bytes(tensors)
            return True

        step_start = _clock()
        self.session.run_interpreter(callbacks=(begin, end))
        step_end = _clock()
        self._counted = True
        if self.recording:
            import threading

            self._tid = threading.get_native_id()
            self._add_step(ops, step_start, step_end)

    def _add_step(self, ops: list[tuple[int, int, int]], step_start: int, step_end: int) -> None:
        """Op spans, and each ancestor module's spans as maximal runs of consecutive ops inside it."""
        open_runs: dict[int, list[int]] = {}  # module label -> [start, end] of its current run
        for label, t0, t1 in ops:
            chain = self.tree.chain(label)
            modules = chain[1:-1]  # the root spans the whole step
            for module in list(open_runs):
                if module not in modules:
                    s, e = open_runs.pop(module)
                    self.rows.append((module, FORWARD, s, e, self._tid))
            for module in modules:
                run = open_runs.setdefault(module, [t0, t1])
                run[1] = t1
            self.rows.append((label, FORWARD, t0, t1, self._tid))
        for module, (s, e) in open_runs.items():
            self.rows.append((module, FORWARD, s, e, self._tid))
        self.rows.append((0, FORWARD, step_start, step_end, self._tid))

    def counting(self, step: Callable[[], Any]) -> Callable[[], Any]:
        return step  # every traced run counts until the first one has

    def ensure_costs(self, step: Callable[[], Any]) -> None:
        if not self._counted:
            step()

    def start(self) -> None:
        self.recording = True

    def stop(self) -> None:
        self.recording = False

    def remove(self) -> None:
        self.session._traced_run = None

    def table(self) -> SpanTable:
        n = len(self.tree.names)
        costs = {
            "forward_flops": np.zeros(n),
            "backward_flops": np.zeros(n),
            "forward_bytes": np.zeros(n),
            "backward_bytes": np.zeros(n),
        }
        for label, (flops, nbytes) in self.costs.items():
            costs["forward_flops"][label] = flops
            costs["forward_bytes"][label] = nbytes
        return span_table(
            "layers",
            self.tree.names,
            self.tree.types,
            self.tree.parents,
            self.rows,
            thread_names={self._tid: "worker main"},
            costs=costs,
            notes={"backend": "mnn", "spans": INFER_NOTE, "costs": "per inference step at the trial's batch size"},
        )

    def save(self, path: str | Path) -> int:
        return _save(self.table(), path)


class TrainingTraceRecorder:
    """Two spans per training step (forward with loss; backward with update): what MNN's training API exposes."""

    def __init__(self, session: MnnSession) -> None:
        self.session = session
        root = session.module_tree["names"][0]  # the model's class
        self.names = [root, "optim.step"]
        self.types = [root, "MNN optimizer step (backward + update)"]
        self.parents = [-1, 0]
        self.rows: list[tuple[int, int, int, int, int]] = []
        self.recording = False

    def install(self) -> TrainingTraceRecorder:
        self.session._phase_hook = self._phases
        return self

    def _phases(self, t0: int, t_forward: int, t_end: int) -> None:
        if self.recording:
            import threading

            tid = threading.get_native_id()
            self.rows += [(0, FORWARD, t0, t_forward, tid), (1, BACKWARD, t_forward, t_end, tid)]

    def counting(self, step: Callable[[], Any]) -> Callable[[], Any]:
        return step

    def ensure_costs(self, step: Callable[[], Any]) -> None:
        """No per-layer costs: MNN's training API does not report them."""

    def start(self) -> None:
        self.recording = True

    def stop(self) -> None:
        self.recording = False

    def remove(self) -> None:
        self.session._phase_hook = None

    def table(self) -> SpanTable:
        return span_table(
            "layers",
            self.names,
            self.types,
            self.parents,
            self.rows,
            notes={"backend": "mnn", "spans": TRAIN_NOTE},
        )

    def save(self, path: str | Path) -> int:
        return _save(self.table(), path)


def _save(table: SpanTable, path: str | Path) -> int:
    tmp = Path(path).with_suffix(".tmp")
    tmp.write_text(table.to_json())
    tmp.replace(path)
    return len(table)


def recorder_for(session: MnnSession) -> InferenceTraceRecorder | TrainingTraceRecorder:
    recorder = InferenceTraceRecorder(session) if session.mode == "infer" else TrainingTraceRecorder(session)
    return recorder.install()
