"""``--trace layers`` on LiteRT: the compiled model's profiler events (:mod:`.capi`), read into the span table the
torch tracing writes, so ``edgebench layers``, the trace and the partition analyzer read LiteRT trials as torch's.

Each run of the model is a root span (from registering its buffers to syncing them).  Inside it, each operator is
a span under the module it computed (:mod:`.layers`), and module spans are the contiguous stretches of their
operators, so spans nest as a call stack.  Two limits of what LiteRT reports, carried into the table's notes:

* Times are whole microseconds, so a small model's operators read 0-25 us and their shares are coarse.
* XNNPACK reports each operator's *duration* only (its events have no start time).  Operators run one after
  another on the calling thread (threads split the work inside an operator), so they are laid end to end from
  the start of the run's ``Invoke``, in run order; the run's own overhead (buffer registration and sync) is the
  root's time.

Only the runs inside the measured steps are kept.  FLOPs are not counted (LiteRT reports none): ``costs`` is null.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.backends.litert.capi import DEFAULT, DELEGATE_PROFILED_OPERATOR_INVOKE, OPERATOR_INVOKE, ProfiledEvent
from edgebench.backends.litert.layers import align, op_module
from edgebench.backends.litert.model_file import TfliteOp
from edgebench.host.files import write_text_replacing
from edgebench.records.spans import FORWARD, SpanTable, span_table

if TYPE_CHECKING:
    from edgebench.backends.litert.session import LiteRtSession

#: The compiled model's own stages of a run (``LiteRT::Run[buffer registration]``, ``... [Buffer sync]``).
_RUN_STAGE = "LiteRT::Run["


@dataclass(frozen=True)
class OpTime:
    """One operator's time in one run: ``start_ns`` 0 where the source gives none (XNNPACK's operators)."""

    kind: int
    index: int
    tag: str
    start_ns: int
    elapsed_ns: int


@dataclass
class Run:
    """One run of the model: its stretch on the monotonic clock, where its ``Invoke`` began, its operators."""

    start_ns: int
    end_ns: int
    invoke_ns: int | None = None
    ops: list[OpTime] = field(default_factory=list)


def split_runs(events: Sequence[ProfiledEvent]) -> list[Run]:
    """The profiler's events grouped by run: a run opens at its buffer registration (or its ``Invoke`` where none
    came first) and holds the operator events up to the next."""
    runs: list[Run] = []
    for e in events:
        if e.kind == DEFAULT and e.start_us > 0:
            start, end = e.start_us * 1000, (e.start_us + e.elapsed_us) * 1000
            opens = e.tag.startswith(_RUN_STAGE + "buffer registration") or (
                e.tag == "Invoke" and (not runs or runs[-1].invoke_ns is not None)
            )
            if opens:
                runs.append(Run(start, end))
            elif runs:
                runs[-1].end_ns = max(runs[-1].end_ns, end)
            if e.tag == "Invoke" and runs:
                runs[-1].invoke_ns = start
        elif e.kind in (OPERATOR_INVOKE, DELEGATE_PROFILED_OPERATOR_INVOKE) and runs:
            runs[-1].ops.append(OpTime(e.kind, e.index, e.tag, e.start_us * 1000, e.elapsed_us * 1000))
    return runs


class Labels:
    """The span table's labels: the root, the modules as they are reached, and one label per operator."""

    def __init__(self, root: str) -> None:
        self.names, self.types, self.parents = [root], [root], [-1]
        self._index: dict[str, int] = {"": 0}

    def label(self, key: str, name: str, kind: str, parent: int) -> int:
        if key not in self._index:
            self._index[key] = len(self.names)
            self.names.append(name)
            self.types.append(kind)
            self.parents.append(parent)
        return self._index[key]

    def chain(self, modules: Sequence[tuple[str, str]]) -> list[int]:
        """Labels of the module chain ``(qualified, class)``, outermost first (the root excluded)."""
        out, parent = [], 0
        for qual, kind in modules:
            parent = self.label(qual, qual, kind, parent)
            out.append(parent)
        return out


@dataclass(frozen=True)
class OpPlace:
    """Where an operator's spans go: its module chain and its own label's name and type."""

    modules: tuple[tuple[str, str], ...]
    name: str
    kind: str


def operator_keys(run_ops: Sequence[OpTime]) -> list[tuple[int, int]]:
    """Each operator event's key in its run: ``(OPERATOR_INVOKE, node index)`` for a TFLite op the interpreter ran,
    ``(DELEGATE_PROFILED_OPERATOR_INVOKE, n)`` for the run's n-th XNNPACK operator (XNNPACK numbers its operators
    within each delegated partition, so its own index repeats where the graph has several)."""
    keys, n = [], 0
    for e in run_ops:
        if e.kind == DELEGATE_PROFILED_OPERATOR_INVOKE:
            keys.append((e.kind, n))
            n += 1
        else:
            keys.append((e.kind, e.index))
    return keys


def place_operators(
    run_ops: Sequence[OpTime], ops: Sequence[TfliteOp], modules: dict[str, str] | None
) -> tuple[dict[tuple[int, int], OpPlace], dict[str, int]]:
    """Each operator event of one run placed under its module (by :func:`operator_keys`), and counts for the notes.

    A TFLite op the interpreter ran itself is its node; XNNPACK's operators are matched in order to the TFLite ops
    the interpreter did not run (:func:`~edgebench.backends.litert.layers.align`); one XNNPACK inserted goes under
    the module of the next matched operator."""
    keys = operator_keys(run_ops)
    builtin = {e.index for e in run_ops if e.kind == OPERATOR_INVOKE}
    delegated_ops = [op for op in ops if op.index not in builtin]
    xnn = [(key, e.tag) for key, e in zip(keys, run_ops, strict=True) if e.kind == DELEGATE_PROFILED_OPERATOR_INVOKE]
    matched = align([tag for _, tag in xnn], delegated_ops)
    places: dict[tuple[int, int], OpPlace] = {}
    following: tuple[tuple[str, str], ...] = ()
    for ((kind, n), tag), j in reversed(list(zip(xnn, matched, strict=True))):
        chain = following if j is None else tuple(op_module(delegated_ops[j], modules))
        following = chain
        qual = chain[-1][0] if chain else ""
        label = f"{tag} #{n}"
        inserted = j is None and bool(delegated_ops)  # without the model's ops nothing is matched, nor inserted
        places[(kind, n)] = OpPlace(chain, f"{qual}/{label}" if qual else label, f"{tag} (inserted)" if inserted
                                    else tag)  # fmt: skip
    by_index = {op.index: op for op in ops}
    for e in run_ops:
        if e.kind == OPERATOR_INVOKE and e.index in by_index:
            op = by_index[e.index]
            chain = tuple(op_module(op, modules))
            qual = chain[-1][0] if chain else ""
            label = f"{op.name} [{op.index}]"
            places[(e.kind, e.index)] = OpPlace(chain, f"{qual}/{label}" if qual else label, op.name)
    counts = {
        "xnnpack_operators": len(xnn),
        "xnnpack_operators_matched": sum(j is not None for j in matched),
        "xnnpack_operators_inserted": sum(j is None for j in matched) if delegated_ops else 0,
        "tflite_ops_run_by_the_interpreter": len(builtin),
        "tflite_ops_without_an_operator": len(delegated_ops) - sum(j is not None for j in matched),
        "operators_without_a_module": sum(not p.modules for p in places.values()),
    }
    return places, counts


#: What every table from LiteRT's profiler says of itself.
PROFILER_NOTES = {
    "source": "LiteRT's op profiler (compiled model with enable_profiling, through libLiteRt.so's C API)",
    "labels": "XNNPACK operators (module/operator #n, n its place in the run) under the module of the TFLite op "
    "each computes, matched in run order; an operator XNNPACK inserted (activation quantization) sits under the "
    "module of the next one; a TFLite op the interpreter ran itself is module/OP [node]",
    "op_start": "XNNPACK reports each operator's duration only: its spans are laid end to end from the run's "
    "Invoke, in run order; the run's buffer registration and sync are the root's own time",
    "resolution": "whole microseconds per operator",
}


def events_table(
    events: Sequence[ProfiledEvent],
    window_ns: tuple[int, int],
    ops: Sequence[TfliteOp],
    modules: dict[str, str] | None,
    root: str,
    tid: int,
) -> SpanTable:
    """The layer span table of the profiler's runs inside ``window_ns`` (the monotonic clock, as the profiler's)."""
    return runs_table(split_runs(events), window_ns, ops, modules, root, tid, PROFILER_NOTES)


def runs_table(
    runs: Sequence[Run],
    window_ns: tuple[int, int],
    ops: Sequence[TfliteOp],
    modules: dict[str, str] | None,
    root: str,
    tid: int,
    notes: dict[str, Any],
) -> SpanTable:
    """The layer span table of ``runs`` inside ``window_ns``: a root span per run, module spans as the contiguous
    stretches of their operators, an operator span each (laid after the previous where its start is unknown)."""
    labels = Labels(root)
    rows: list[tuple[int, int, int, int, int]] = []
    places: dict[tuple[int, int], OpPlace] = {}
    counts: dict[str, int] = {}
    known = {op.index for op in ops}
    for run in runs:
        start, end = run.start_ns, run.end_ns
        if not window_ns[0] <= (start + end) // 2 <= window_ns[1]:
            continue
        # A node index the file does not have is a delegate's kernel node: its operators are timed one by one.
        run_ops = [e for e in run.ops if e.kind != OPERATOR_INVOKE or e.index in known]
        if not places:
            places, counts = place_operators(run_ops, ops, modules)
        rows.append((0, FORWARD, start, end, tid))
        # Open module spans as [label, row index]: a module's row is written where it opens (before its operators,
        # so that a parent sorts first where both last the same whole microseconds) and its end grows.
        open_spans: list[list[int]] = []
        cursor = run.invoke_ns or run.start_ns
        for event, key in zip(run_ops, operator_keys(run_ops), strict=True):
            place = places.get(key) or OpPlace((), event.tag, event.tag)
            op_start = max(event.start_ns, cursor)  # no start given: laid after the last operator
            op_end = min(op_start + event.elapsed_ns, end)
            cursor = op_end
            chain = labels.chain(place.modules)
            keep = 0
            while keep < min(len(open_spans), len(chain)) and open_spans[keep][0] == chain[keep]:
                keep += 1
            open_spans = open_spans[:keep]  # the rest closed: their rows already end at their last operator
            for module in chain[keep:]:
                open_spans.append([module, len(rows)])
                rows.append((module, FORWARD, op_start, op_end, tid))
            for _, row in open_spans:
                rows[row] = (*rows[row][:3], op_end, tid)
            own = labels.label(f"op:{key[0]}:{key[1]}", place.name, place.kind, chain[-1] if chain else 0)
            rows.append((own, FORWARD, op_start, op_end, tid))
    return span_table(
        "layers",
        labels.names,
        labels.types,
        labels.parents,
        rows,
        thread_names={tid: "worker main"},
        notes={**notes, **counts, "costs": "not counted: LiteRT reports no FLOPs"},
    )


class ProfileRecorder:
    """The worker's :class:`~edgebench.backends.base.TraceRecording` for a LiteRT session on the profiled path."""

    def __init__(self, session: LiteRtSession, tid: int | None = None) -> None:
        self.session = session
        self.tid = tid if tid is not None else threading.get_native_id()
        self.window: list[int] = []

    def counting(self, step: Callable[[], Any]) -> Callable[[], Any]:
        return step  # no FLOP count: LiteRT reports none

    def ensure_costs(self, step: Callable[[], Any]) -> None:
        pass

    def start(self) -> None:
        self.session.profiled.start_profiling()
        self.window = [time.perf_counter_ns()]

    def stop(self) -> None:
        self.window.append(time.perf_counter_ns())
        self.session.profiled.stop_profiling()

    def remove(self) -> None:
        pass

    def table(self) -> SpanTable:
        session = self.session
        return events_table(
            session.profiled.events(),
            (self.window[0], self.window[-1]),
            session.ops,
            session.modules,
            session.root_class,
            self.tid,
        )

    def save(self, path: str) -> int:
        table = self.table()
        write_text_replacing(Path(path), table.to_json())
        return len(table)
