"""The span table: what a traced trial stores as its ``spans`` series and what every view reads back.

A span is one stretch of work by one label (a module, or an aten op) on one thread: ``label``, ``kind``
(forward, backward, optimizer, other), ``start_ns`` and ``end_ns`` on the monotonic clock of the step events and
the sampler.  Spans of one thread nest properly (a child lies inside its parent), which is what makes exclusive
("self") time and a Perfetto slice stack well defined.  Columns are numpy arrays and the JSON form is columnar, so
a mobilenet_v2 trial of 20 steps (~12,000 spans) stays a few hundred kB before the store's gzip.

For ``layers``, labels are modules by qualified name (the root is named after its class) with their parent in
the module tree; ``costs`` holds each module's own FLOPs and bytes per step, forward and backward, counted once
at the trial's batch size (:mod:`edgebench.graph.layer_costs`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

FORWARD, BACKWARD, OPTIMIZER, OTHER = 0, 1, 2, 3
KINDS = ("forward", "backward", "optimizer", "other")
FORMAT = "edgebench-spans"
VERSION = 1
COST_FIELDS = ("forward_flops", "backward_flops", "forward_bytes", "backward_bytes")

Granularity = Literal["layers", "ops"]


@dataclass(frozen=True)
class SpanTable:
    granularity: Granularity
    #: Per label: name, type (module class, or ``op``) and parent label (-1 for none).
    names: tuple[str, ...]
    types: tuple[str, ...]
    parents: tuple[int, ...]
    #: Per span.
    label: np.ndarray
    kind: np.ndarray
    start_ns: np.ndarray
    end_ns: np.ndarray
    tid: np.ndarray
    #: Native thread id -> a name for the trace ("worker main", "profiler thread 3").
    thread_names: dict[int, str] = field(default_factory=dict)
    #: Per label arrays named by :data:`COST_FIELDS`, each the label's own (exclusive) cost in one training step.
    costs: dict[str, np.ndarray] | None = None
    #: Facts about how the spans were taken (hooks used, what a cost counts), shown by the views.
    notes: dict[str, Any] = field(default_factory=dict)
    #: Per span, by perf event name: the count over the span (``--counters``, layer spans); None without.
    counters: dict[str, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.label)

    @property
    def depth(self) -> list[int]:
        """Depth of each label in its tree (the root and op labels are 0)."""
        out: list[int] = []
        for i in range(len(self.names)):
            d, p = 0, self.parents[i]
            while p >= 0:
                d, p = d + 1, self.parents[p]
            out.append(d)
        return out

    def to_json(self) -> str:
        doc: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "granularity": self.granularity,
            "names": list(self.names),
            "types": list(self.types),
            "parents": list(self.parents),
            "spans": {
                "label": self.label.tolist(),
                "kind": self.kind.tolist(),
                "start_ns": self.start_ns.tolist(),
                "end_ns": self.end_ns.tolist(),
                "tid": self.tid.tolist(),
            },
            "thread_names": {str(k): v for k, v in self.thread_names.items()},
            "costs": {k: v.tolist() for k, v in self.costs.items()} if self.costs else None,
            "notes": self.notes,
            "counters": {k: v.tolist() for k, v in self.counters.items()} if self.counters else None,
        }
        return json.dumps(doc, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> SpanTable:
        from edgebench.parsing import json_text

        doc = json_text(text)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError("not an edgebench span table")
        if doc.get("version", 0) > VERSION:
            raise ValueError(f"span table version {doc['version']} is newer than this edgebench ({VERSION})")
        spans = doc["spans"]
        costs = doc.get("costs")
        return cls(
            granularity=doc["granularity"],
            names=tuple(doc["names"]),
            types=tuple(doc["types"]),
            parents=tuple(doc["parents"]),
            label=np.asarray(spans["label"], dtype=np.int32),
            kind=np.asarray(spans["kind"], dtype=np.int8),
            start_ns=np.asarray(spans["start_ns"], dtype=np.int64),
            end_ns=np.asarray(spans["end_ns"], dtype=np.int64),
            tid=np.asarray(spans["tid"], dtype=np.int64),
            thread_names={int(k): v for k, v in doc.get("thread_names", {}).items()},
            costs={k: np.asarray(v, dtype=np.float64) for k, v in costs.items()} if costs else None,
            notes=doc.get("notes", {}),
            counters={k: np.asarray(v, dtype=np.int64) for k, v in doc["counters"].items()}
            if doc.get("counters")
            else None,
        )


def span_table(
    granularity: Granularity,
    names: list[str],
    types: list[str],
    parents: list[int],
    rows: list[tuple[int, int, int, int, int]],
    **extra: Any,
) -> SpanTable:
    """Build a table from ``(label, kind, start_ns, end_ns, tid)`` rows, sorted by start (parents first)."""
    data = np.asarray(rows, dtype=np.int64).reshape(len(rows), 5)
    order = np.lexsort((-data[:, 3], data[:, 2]))
    data = data[order]
    return SpanTable(
        granularity=granularity,
        names=tuple(names),
        types=tuple(types),
        parents=tuple(parents),
        label=data[:, 0].astype(np.int32),
        kind=data[:, 1].astype(np.int8),
        start_ns=data[:, 2].copy(),
        end_ns=data[:, 3].copy(),
        tid=data[:, 4].copy(),
        **extra,
    )
