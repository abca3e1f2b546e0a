"""Tables that stay readable at 80 columns: short cells are never cut, only the long text of a row wraps.

Rich shrinks every column of a table wider than the terminal, ``no_wrap`` ones too, so a number or a model name
comes out as ``squeezen…`` or ``6.62`` for ``6.62M``.  Giving those columns their longest cell as minimum width
leaves the shrinking to the columns of prose (sources, configurations), which wrap without losing anything.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text


def keep_whole(table: Table, *names: str) -> Table:
    """Make the columns ``names`` (all when none given) at least as wide as their widest cell and the longest word
    of their header (a header may wrap: ``fwd`` over ``FLOPs``); the table's padding collapses to one space."""
    table.collapse_padding = True
    for column in table.columns:
        if names and column.header not in names:
            continue
        widths = [Text.from_markup(str(c)).cell_len for c in column.cells]
        widths += [len(word) for word in str(column.header).split()]
        column.min_width = max(widths)
    return table
