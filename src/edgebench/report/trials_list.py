"""The table ``edgebench trials`` prints: one row per stored trial, the summary table's fields plus when it ran."""

from __future__ import annotations

from rich import box
from rich.table import Table

from edgebench.report.columns import SUMMARY_COLUMNS, summary_values
from edgebench.report.fit import keep_whole
from edgebench.result import TrialResult

#: Shown in the terminal (the HTML report has every summary column); ``when`` comes from ``started_at``.
_SHOWN = ("trial_id", "model", "backend", "target", "batch_size", "step_ms", "throughput_sps", "peak_memory_mib",
          "energy_per_sample_j", "status")  # fmt: skip


def _text(value: object, digits: int | None) -> str:
    if value is None:
        return "-"
    return str(value) if digits is None else f"{value:.{digits}f}"


def trials_table(results: list[TrialResult]) -> Table:
    columns = [c for c in SUMMARY_COLUMNS if c.field in _SHOWN]
    table = Table(title=f"{len(results)} stored trials", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("trial")
    table.add_column("when")
    for c in columns[1:]:
        table.add_column(c.title, justify="left" if c.digits is None else "right")
    for r in results:
        values = summary_values(r)
        when = (r.started_at or "-").replace("T", " ")[:16]  # to the minute: the id holds the seconds
        status = r.status if r.ok else f"[red]{r.status}[/red]"
        cells = [_text(values[c.field], c.digits) for c in columns[1:-1]]
        table.add_row(r.trial_id, when, *cells, status)
    return keep_whole(table)
