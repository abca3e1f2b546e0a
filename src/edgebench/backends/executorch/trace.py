"""``--trace layers`` on ExecuTorch: the runtime's ETDump, read back into the span table the torch tracing writes.

A traced trial loads its program with the event tracer on (``enable_etdump=True``); every execution of the method is
then an ``Execute`` run of profile events (:mod:`.etdump`): ``Method::execute`` (the whole run), per portable kernel
``native_call_<op>`` and ``OPERATOR_CALL`` around it (the same instruction twice: only ``native_call_*`` is kept, or
times would count double), per delegate ``DELEGATE_CALL`` and, inside it, one event per op of the delegate (XNNPACK's
``Convolution (NHWC, F32) IGEMM #1``...).

Labels: a portable kernel is its instruction's op under the torch module the graph says it ran in
(:class:`edgebench.backends.executorch.lower.Instruction`); a delegate's op is matched, by kind and in order, to the
ops the delegate took (a ``Convolution`` to the next ``convolution``), and an op XNNPACK inserted (a ``Transpose`` to
its NHWC layout, a ``Convert``) sits under the module of the next op it took.  An activation the delegate fused into
the op before it (Conv + ReLU) has no span of its own.  A module's spans are the runs of consecutive ops inside it,
so spans nest and exclusive times add up.  A training program's joint graph keeps no module names, so its ops are
labelled by op and instruction, and each span's kind (forward, backward) comes from the graph (the ops the loss
depends on are the forward pass); the optimizer's step is one span of its own.  A user's ``.pte`` brings no graph:
its spans are labelled by the ops of its instructions.

Clock: the runtime's ticks start when it started, not on the monotonic clock of the step events, so each run is
placed inside the worker's own timing of the call that ran it (centred: the call's overhead is split before and after).
FLOPs are not counted (ExecuTorch reports none).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.backends.executorch.etdump import Run, executions
from edgebench.records.spans import BACKWARD, FORWARD, OPTIMIZER, SpanTable, span_table

#: A delegate op's kind (``Convolution (NHWC, F32) IGEMM #1`` -> ``Convolution``) -> the aten ops it can compute.
XNNPACK_KINDS = {
    "Convolution": {"convolution"},
    "Deconvolution": {"convolution"},
    "Fully Connected": {"linear", "addmm", "mm"},
    "Batch Matrix Multiply": {"bmm", "mm", "matmul"},
    "Max Pooling": {"max_pool2d", "max_pool2d_with_indices"},
    "Average Pooling": {"avg_pool2d"},
    "Global Average Pooling": {"mean", "adaptive_avg_pool2d", "avg_pool2d"},
    "Add": {"add"},
    "Multiply": {"mul"},
    "Subtract": {"sub"},
    "Divide": {"div"},
    "Clamp": {"relu", "hardtanh", "clamp", "relu6"},
    "ReLU": {"relu"},
    "HardSwish": {"hardswish"},
    "Sigmoid": {"sigmoid"},
    "Tanh": {"tanh"},
    "Softmax": {"softmax", "_softmax"},
    "Concatenate": {"cat"},
    "Static Reshape": {"view_copy", "view", "reshape"},
    "Copy": {"view_copy", "clone", "_clone_dim_order"},
    "Transpose": {"permute_copy"},
    "Static Constant Pad": {"constant_pad_nd"},
    "Mean": {"mean"},
}
_KIND = re.compile(r"^(.*?)(?: \(|\s+#\d+$|$)")

NOTE = (
    "ExecuTorch ETDump: one span per portable kernel (native_call_*) or delegated op (XNNPACK's own op names, matched "
    "to the ops it took by kind and order; an op XNNPACK inserted sits under the next op's module, an activation it "
    "fused has no span), under the torch module the graph names; runs placed inside the worker's timing of each call"
)
TRAIN_NOTE = (
    "ExecuTorch training (joint forward-backward program on the portable kernels): one span per kernel, labelled by "
    "op and instruction (the joint graph keeps no module names), forward or backward from the graph; the optimizer's "
    "step (the runtime's SGD) one span"
)


def xnnpack_kind(name: str) -> str:
    match = _KIND.match(name)
    return (match.group(1) if match else name).strip()


@dataclass(frozen=True)
class Labels:
    """The module tree (names, types, parents), extended with one label per op as the runs name them."""

    names: list[str]
    types: list[str]
    parents: list[int]

    @classmethod
    def of(cls, tree: dict[str, list[Any]] | None, root: str) -> Labels:
        if not tree:
            return cls([root], [root], [-1])
        return cls(list(tree["names"]), list(tree["types"]), [int(p) for p in tree["parents"]])

    def module(self, qualified: str | None) -> int:
        """The label of a module's qualified name (the root where it is unknown)."""
        if qualified and qualified in self.names[1:]:
            return self.names.index(qualified, 1)
        return 0

    def add(self, name: str, kind: str, parent: int) -> int:
        self.names.append(name)
        self.types.append(kind)
        self.parents.append(parent)
        return len(self.names) - 1

    def chain(self, label: int) -> list[int]:
        """``label``'s ancestors below the root, outermost first, then ``label``."""
        out = [label]
        while self.parents[out[-1]] > 0:
            out.append(self.parents[out[-1]])
        return out[::-1]


@dataclass(frozen=True)
class OpSpan:
    """One op of a run, placed: its label, kind, start and end on the monotonic clock."""

    label: int
    kind: int
    start_ns: int
    end_ns: int


def delegated_modules(events: Sequence[str], delegated: Sequence[Sequence[str | None]]) -> list[str | None]:
    """The module of each of a delegate's events (its own op names, in run order), matched by kind and order to the
    ``[op, module]`` pairs it took (see the module's docstring)."""
    out: list[str | None] = []
    at = 0
    for name in events:
        ops = XNNPACK_KINDS.get(xnnpack_kind(name), set())
        found = next((j for j in range(at, len(delegated)) if delegated[j][0] in ops), None)
        if found is not None:
            out.append(delegated[found][1])
            at = found + 1
        else:  # an op the delegate inserted: the module of the next op it took
            out.append(delegated[at][1] if at < len(delegated) else None)
    return out


class SpanBuilder:
    """Rows of the span table, run by run."""

    def __init__(self, labels: Labels, instructions: Sequence[Any] | None, tid: int, *, training: bool) -> None:
        self.labels = labels
        self.instructions = list(instructions or [])
        self.tid = tid
        self.training = training
        self.rows: list[tuple[int, int, int, int, int]] = []
        self._ops: dict[tuple[int, str], int] = {}

    def _op_label(self, instruction: int, name: str, module: str | None) -> int:
        key = (instruction, name)
        if key not in self._ops:
            parent = self.labels.module(module)
            shown = f"{module}/{name}" if module else name
            self._ops[key] = self.labels.add(shown, name, parent)
        return self._ops[key]

    def _instruction(self, index: int) -> Any | None:
        return self.instructions[index] if 0 <= index < len(self.instructions) else None

    def run(self, run: Run, offset_ns: int) -> None:
        """One execution's spans, its ticks moved by ``offset_ns`` onto the monotonic clock."""
        ops: list[OpSpan] = []
        delegate_events: dict[int, list[Any]] = {}
        whole = None
        for event in run.events:
            if event.name == "Method::execute":
                whole = event
            elif event.name is None and event.delegate_debug_id_str:
                delegate_events.setdefault(event.instruction_id, []).append(event)
        for event in run.events:
            name = event.name or ""
            index = event.instruction_id
            instruction = self._instruction(index)
            kind = BACKWARD if instruction is not None and instruction.phase == "backward" else FORWARD
            if name.startswith("native_call_"):
                op = instruction.op if instruction is not None else name.removeprefix("native_call_").split(".")[0]
                label_name = op if not self.training else f"{op} #{index}"
                module = None if instruction is None or self.training else instruction.module
                label = self._op_label(index, label_name, module)
            elif name == "DELEGATE_CALL" and index not in delegate_events:  # a delegate without per-op events
                label = self._op_label(index, instruction.op if instruction is not None else "delegate", None)
            else:
                continue
            ops.append(OpSpan(label, kind, event.start_time + offset_ns, event.end_time + offset_ns))
        for index, events in delegate_events.items():
            instruction = self._instruction(index)
            names = [e.delegate_debug_id_str for e in events]
            modules = delegated_modules(names, instruction.delegated if instruction is not None else [])
            for event, name, module in zip(events, names, modules, strict=True):
                label = self._op_label(index, name, module)
                ops.append(OpSpan(label, FORWARD, event.start_time + offset_ns, event.end_time + offset_ns))
        ops.sort(key=lambda o: o.start_ns)
        self._nest(ops)
        if whole is not None:
            self._root(ops, whole.start_time + offset_ns, whole.end_time + offset_ns)

    def _nest(self, ops: list[OpSpan]) -> None:
        """Op spans, and each ancestor module's spans as maximal runs of consecutive ops inside it."""
        open_runs: dict[int, list[int]] = {}  # module label -> [start, end, kind]
        for op in ops:
            chain = self.labels.chain(op.label)[:-1]
            for module in list(open_runs):
                if module not in chain or open_runs[module][2] != op.kind:
                    start, end, kind = open_runs.pop(module)
                    self.rows.append((module, kind, start, end, self.tid))
            for module in chain:
                span = open_runs.setdefault(module, [op.start_ns, op.end_ns, op.kind])
                span[1] = max(span[1], op.end_ns)
            self.rows.append((op.label, op.kind, op.start_ns, op.end_ns, self.tid))
        for module, (start, end, kind) in open_runs.items():
            self.rows.append((module, kind, start, end, self.tid))

    def _root(self, ops: list[OpSpan], start_ns: int, end_ns: int) -> None:
        """The whole run as the root's span; a training run's as its forward and backward parts."""
        backward = [o for o in ops if o.kind == BACKWARD]
        if not backward:
            self.rows.append((0, FORWARD, start_ns, end_ns, self.tid))
            return
        split = backward[0].start_ns
        self.rows.append((0, FORWARD, start_ns, split, self.tid))
        self.rows.append((0, BACKWARD, split, end_ns, self.tid))

    def optimizer(self, start_ns: int, end_ns: int) -> None:
        label = self._ops.get((-1, "optimizer"))
        if label is None:
            label = self._ops[(-1, "optimizer")] = self.labels.add("optimizer.step", "ExecuTorch SGD (training)", 0)
        self.rows.append((label, OPTIMIZER, start_ns, end_ns, self.tid))


def place(runs: list[Run], windows: Sequence[tuple[int, int]]) -> list[tuple[Run, int]]:
    """Each run with the offset that centres its ``Method::execute`` inside the call window that ran it."""
    out = []
    for run, (t0, t1) in zip(runs, windows, strict=False):
        whole = next((e for e in run.events if e.name == "Method::execute"), None)
        if whole is None:
            continue
        out.append((run, ((t0 + t1) - (whole.start_time + whole.end_time)) // 2))
    return out


def span_rows(
    runs: list[Run],
    windows: Sequence[tuple[int, int]],
    labels: Labels,
    instructions: Sequence[Any] | None,
    *,
    tid: int,
    training: bool,
    optimizer_windows: Sequence[tuple[int, int]] = (),
    notes: dict[str, Any] | None = None,
) -> SpanTable:
    """The layer span table of ``runs`` (the executions timed in ``windows``, in order)."""
    builder = SpanBuilder(labels, instructions, tid, training=training)
    for run, offset in place(runs, windows):
        builder.run(run, offset)
    for start, end in optimizer_windows:
        builder.optimizer(start, end)
    return span_table(
        "layers",
        labels.names,
        labels.types,
        labels.parents,
        builder.rows,
        thread_names={tid: "worker main"},
        notes={
            "backend": "executorch",
            "spans": TRAIN_NOTE if training else NOTE,
            "costs": "not counted: ExecuTorch reports no FLOPs",
            **(notes or {}),
        },
    )


class EtdumpRecorder:
    """The worker's :class:`~edgebench.backends.base.TraceRecording` for a program loaded with ETDump on: it keeps
    the worker's timing of every call while recording, and reads the ETDump back when the trial saves its spans."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.tid = threading.get_native_id()
        self.skip = 0
        self.windows: list[tuple[int, int]] = []
        self.optimizer_windows: list[tuple[int, int]] = []
        self.recording = False

    def install(self) -> EtdumpRecorder:
        self.session.call_hook = self._call
        return self

    def _call(self, what: str, start_ns: int, end_ns: int) -> None:
        if not self.recording:
            return
        (self.windows if what == "execute" else self.optimizer_windows).append((start_ns, end_ns))

    def counting(self, step: Callable[[], Any]) -> Callable[[], Any]:
        return step  # no FLOP count: ExecuTorch reports none

    def ensure_costs(self, step: Callable[[], Any]) -> None:
        pass

    def start(self) -> None:
        self.skip = self.session.executions
        self.recording = True

    def stop(self) -> None:
        self.recording = False

    def remove(self) -> None:
        self.session.call_hook = None

    def table(self) -> SpanTable:
        from edgebench.backends.executorch.etdump import read

        session = self.session
        with session.etdump_file() as path:
            runs = executions(read(path))[self.skip : self.skip + len(self.windows)]
        return span_rows(
            runs,
            self.windows,
            Labels.of(session.module_tree, session.root_name),
            session.instructions,
            tid=self.tid,
            training=session.mode == "train",
            optimizer_windows=self.optimizer_windows,
        )

    def save(self, path: str | Path) -> int:
        table = self.table()
        tmp = Path(path).with_suffix(".tmp")
        tmp.write_text(table.to_json())
        tmp.replace(path)
        return len(table)
