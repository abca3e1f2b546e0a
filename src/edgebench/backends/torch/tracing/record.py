"""What the worker does for ``--trace``: put the tracer in place, count costs once, record, save.

Order inside a trial: :meth:`TraceRecorder.install` before the warm-up (every step runs with the tracer in place,
recording off); the first warm-up step runs under the FLOP/byte counter (its time is excluded anyway; with
``--warmup 0`` one extra, untimed step does the count); :meth:`start` and :meth:`stop` bracket the measured
steps; :meth:`remove` before the inference phase; :meth:`save` writes the span table once, after measuring.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from torch import nn

from edgebench.backends.torch.tracing.layers import CountingClock, LayerTracer
from edgebench.backends.torch.tracing.ops import OpTracer
from edgebench.graph.layer_costs import count_layer_costs
from edgebench.records.spans import SpanTable


class TraceRecorder:
    def __init__(self, granularity: str, model: nn.Module, counters: Any = None) -> None:
        if granularity not in ("layers", "ops"):
            raise ValueError(f"unknown trace granularity {granularity!r}")
        self.granularity = granularity
        self.model = model
        self.tracer: LayerTracer | OpTracer
        if granularity == "layers":
            # With --counters, each layer span's counts are read at the same ticks that time it.
            self.tracer = LayerTracer(model, CountingClock(counters)) if counters else LayerTracer(model)
        else:
            self.tracer = OpTracer()
        self.costs: dict[str, Any] | None = None
        self.unattributed: dict[str, float] | None = None
        self._needs_count = granularity == "layers"

    def install(self) -> TraceRecorder:
        self.tracer.install()
        return self

    def counting(self, step: Callable[[], Any]) -> Callable[[], Any]:
        """``step``, whose first call also counts each module's FLOPs and bytes (layer granularity only)."""

        def first_counts() -> Any:
            if not self._needs_count:
                return step()
            self._needs_count = False
            out: list[Any] = []
            self.costs, self.unattributed = count_layer_costs(self.model, lambda: out.append(step()))
            return out[0]

        return first_counts

    def ensure_costs(self, step: Callable[[], Any]) -> None:
        """Count now if no warm-up step did (``--warmup 0``): one extra, untimed step."""
        if self._needs_count:
            self.counting(step)()

    def start(self) -> None:
        self.tracer.start()

    def stop(self) -> None:
        self.tracer.stop()

    def remove(self) -> None:
        self.tracer.remove()

    def table(self) -> SpanTable:
        table = self.tracer.table(self.costs)
        if self.unattributed is not None:
            table.notes["unattributed_costs"] = self.unattributed
            table.notes["costs"] = (
                "per training step at the trial's batch size; FLOPs = 2 x multiply-adds of mm/addmm/bmm/conv ops; "
                "bytes = tensor inputs + outputs of every non-view op (an estimate of memory traffic)"
            )
        return table

    def save(self, path: str | Path) -> int:
        """Write the span table as JSON (atomically); returns the number of spans."""
        table = self.table()
        tmp = Path(path).with_suffix(".tmp")
        tmp.write_text(table.to_json())
        tmp.replace(path)
        return len(table)
