"""Memory by category as the terminal, the HTML report and ``feasibility`` show it (the paper's Figure 9).

One declaration of the columns (:data:`edgebench.records.memory.CATEGORIES` plus ``other`` and the peak) serves the
one-line summary, the rich table and the report's table, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table as RichTable

from edgebench.markup import rich_text
from edgebench.records.memory import CATEGORIES, MemoryByCategory
from edgebench.records.result import TrialResult
from edgebench.units import MIB, format_size

COLUMNS = [label for _, label, _ in CATEGORIES] + ["other", "peak"]
SHORT = [short for _, _, short in CATEGORIES] + ["other", "peak"]
NOTE = (
    "measured by the worker on one step: distinct tensor storages (saved activations less parameters and input); "
    "runtime = resident memory before the model was built; other = peak less the categories it holds "
    "(temporaries, workspaces, allocator caches); '-' = not exposed by the backend"
)


def values(c: MemoryByCategory) -> list[int | None]:
    """The category bytes in :data:`COLUMNS`' order."""
    return [c.value(f) for f, _, _ in CATEGORIES] + [c.other_bytes, c.peak_bytes]


#: Categories the one-line text leaves out where they hold nothing (a model with no frozen weights or KV cache).
_WHEN_HELD = {"frozen weights", "KV cache"}


def category_text(c: MemoryByCategory) -> str:
    """One line: each category's size, then other and the peak (and on which device)."""
    parts = [
        f"{label} {'-' if v is None else format_size(v)}"
        for label, v in zip(COLUMNS, values(c), strict=True)
        if not (label in _WHEN_HELD and not v)
    ]
    where = "" if c.peak_includes_runtime else f" ({c.device} allocator; runtime is host memory, not in it)"
    unexposed = f"  [not measured: {'; '.join(c.unexposed)}]" if c.unexposed else ""
    return ", ".join(parts) + where + unexposed


def _sorted(results: Sequence[TrialResult]) -> list[TrialResult]:
    return sorted((r for r in results if r.memory.by_category is not None),
                  key=lambda r: (r.trial.model, r.trial.backend, r.trial.mode, r.trial.batch_size))  # fmt: skip


def category_rows(results: Sequence[TrialResult]) -> list[list[str | float | None]]:
    """Per trial with categories: model, backend, mode, batch, then each column in MiB."""
    rows: list[list[str | float | None]] = []
    for r in _sorted(results):
        c = r.memory.by_category
        assert c is not None
        mib = [None if v is None else v / MIB for v in values(c)]
        rows.append([r.trial.model, r.trial.backend, r.trial.mode, r.trial.batch_size, *mib])
    return rows


def category_table(results: Sequence[TrialResult]) -> RichTable:
    """The rich table (``feasibility``): one row per trial, the categories in MiB under short headings."""
    table = RichTable(title="Memory by category (MiB, measured)", title_justify="left", caption=NOTE)
    for name in ("trial", *SHORT):
        table.add_column(name, justify="left" if name == "trial" else "right")
    for model, backend, mode, batch, *mib in category_rows(results):
        cells = ("-" if v is None else f"{v:.1f}" for v in mib)
        table.add_row(rich_text(f"{model} b={batch} {backend} {mode}"), *cells)
    return table
