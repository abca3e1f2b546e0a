"""The table ``edgebench trials`` prints: one row per stored trial, the summary table's fields plus when it ran.

Readable at 80 columns, as the sweep table is: a column no listed trial has a value for (energy without a power
sensor) is left out, and so is a backend, mode, precision, target, thread count, core mask or frequency every
listed trial shares (the title says which), so an inference trial is never read as a training one and two trials
that differ only in their cores are never two identical rows.
"""

from __future__ import annotations

from rich import box
from rich.table import Table

from edgebench.markup import rich_text
from edgebench.measure.repeats import grouped
from edgebench.records.result import TrialResult
from edgebench.report.columns import SUMMARY_COLUMNS, summary_values
from edgebench.report.fit import keep_whole

#: Shown in the terminal (the HTML report has every summary column), with the terminal's shorter headers.
_SHOWN = {"trial_id": "trial", "model": "model", "backend": "backend", "mode": "mode", "precision": "prec",
          "target": "target", "batch_size": "bs", "threads": "thr", "cores": "mask", "freq_mhz": "MHz", "repeat": "rep",
          "step_ms": "step ms", "throughput_sps": "samp/s", "peak_memory_mib": "MiB",
          "energy_per_sample_j": "mJ/sample", "status": "status"}  # fmt: skip
_DIGITS = {"step_ms": 1, "peak_memory_mib": 0, "freq_mhz": 1}
_ALWAYS = ("trial_id", "model", "batch_size", "step_ms", "status")
#: Shown as columns where the listed trials differ, else named once in the title (how, for a number).
_SHARED = {"backend": "{}", "mode": "{}", "precision": "{}", "target": "{}", "threads": "{} thread(s)",
           "cores": "mask {}", "freq_mhz": "{:g} MHz"}  # fmt: skip


def _text(value: object, field: str, digits: int | None) -> str:
    """Short cells for the terminal (the report and ``--json`` keep every digit); energy in mJ."""
    if value is None:
        return "-"
    if digits is None or digits == 0:
        return str(value)
    return f"{value * 1e3:.3g}" if field == "energy_per_sample_j" else f"{value:.{_DIGITS.get(field, 2)}f}"


def trials_table(results: list[TrialResult], *, when: bool = True) -> Table:
    """``when=False`` (a terminal under 100 columns): no start time, which the id holds to the second anyway.  A
    configuration's repeats are listed together (``rep`` 1/5, 2/5...), whatever order they ran in."""
    results = grouped(results)
    rows = [summary_values(r) for r in results]
    columns = [c for c in SUMMARY_COLUMNS if c.field in _SHOWN]
    columns = [c for c in columns if c.field in _ALWAYS or any(row[c.field] is not None for row in rows)]
    shared = {c: rows[0][c] for c in _SHARED if rows and len({row[c] for row in rows}) == 1}
    columns = [c for c in columns if c.field not in shared]
    named = [_SHARED[c].format(v) for c, v in shared.items() if v is not None]
    title = f"{len(results)} stored trials" + (f" (all {', '.join(named)})" if named else "")
    table = Table(title=rich_text(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("trial")
    if when:
        table.add_column("when")
    for c in columns[1:]:
        table.add_column(_SHOWN[c.field], justify="left" if c.digits is None else "right")
    for r, values in zip(results, rows, strict=True):
        started = [r.started_at.replace("T", " ")[5:16] if r.started_at else "-"] if when else []  # MM-DD HH:MM
        status = rich_text(r.status) if r.ok else f"[red]{rich_text(r.status)}[/red]"
        cells = [rich_text(_text(values[c.field], c.field, c.digits)) for c in columns[1:-1]]
        table.add_row(rich_text(r.trial_id), *started, *cells, status)
    return keep_whole(table)
