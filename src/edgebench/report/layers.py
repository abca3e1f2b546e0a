"""The terminal view of a per-layer report: the layer table, or its roofline view."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from edgebench.host.cpuset import format_cpu_list
from edgebench.host.perf_events import NANOSECOND_EVENTS
from edgebench.markup import rich_text
from edgebench.measure.layers import LayerReport, LayerRow
from edgebench.records.events import Step


def _fmt(value: float | None, spec: str, scale: float = 1.0) -> str:
    return "-" if value is None else format(value * scale, spec)


def _title(report: LayerReport) -> str:
    depth = f", depth {report.depth}" if report.depth is not None else ""
    return (
        f"{report.model}  batch {report.batch_size}  {report.granularity}{depth}  [{report.trial_id}]  "
        f"{report.step_ms:.2f} ms/step over {report.steps} steps"
    )


def _indent(row: LayerRow, report: LayerReport) -> str:
    pad = "  " * row.depth if report.granularity == "layers" and report.depth is None else ""
    return pad + row.name


def layer_table(report: LayerReport, rows: list[LayerRow]) -> Table:
    has_costs = any(r.flops is not None for r in rows)
    has_energy = report.power_source is not None
    cores = format_cpu_list(report.cores) if report.cores else "?"
    table = Table(title=rich_text(_title(report)), title_justify="left")
    columns: list[tuple[str, Callable[[LayerRow], str]]] = [
        ("layer", lambda r: _indent(r, report)),
        ("type", lambda r: r.type),
        ("calls", lambda r: _fmt(r.calls_per_step, ".0f") if r.calls_per_step else ""),
        ("fwd ms", lambda r: _fmt(r.forward_ms, ".3f")),
        ("bwd ms", lambda r: _fmt(r.backward_ms, ".3f")),
    ]
    if report.granularity == "ops":
        columns.append(("opt ms", lambda r: _fmt(r.optimizer_ms, ".3f")))
    columns += [
        ("share %", lambda r: _fmt(r.share_pct, ".1f")),
        (f"worker cpu % ({cores})", lambda r: _fmt(r.cpu_util_pct, ".0f")),
    ]
    if has_energy:
        columns.append((f"energy mJ ({report.energy_basis})", lambda r: _fmt(r.energy_j, ".2f", 1e3)))
    if has_costs:
        columns += [
            ("MFLOP", lambda r: _fmt(r.flops, ".1f", 1e-6) if r.flops else "-"),
            ("GFLOP/s", lambda r: _fmt(r.achieved_gflops, ".1f")),
            ("% peak", lambda r: _fmt(r.peak_pct, ".1f")),
            ("FLOP/B", lambda r: _fmt(r.intensity_flop_per_byte, ".1f")),
            ("bound", lambda r: r.bound or "-"),
        ]
    columns += counter_columns(rows)
    for name, _ in columns:
        table.add_column(rich_text(name), justify="left" if name in ("layer", "type", "bound") else "right")
    for row in [*rows, report.other]:
        table.add_row(*(rich_text(render(row)) for _, render in columns))  # module names, types: the model's
    return table


def kind_table(report: LayerReport) -> Table:
    """A transformer's step by kind of layer, each kind with the layers inside it."""
    table = Table(title="by kind of layer (each with the layers inside it)", title_justify="left")
    for name in ("kind", "fwd ms", "bwd ms", "share %"):
        table.add_column(name, justify="left" if name == "kind" else "right")
    for k in report.kinds or ():
        table.add_row(k.kind, f"{k.forward_ms:.3f}", f"{k.backward_ms:.3f}", f"{k.share_pct:.1f}")
    table.add_row(report.other.name, "", "", f"{report.other.share_pct:.1f}")
    return table


def counter_columns(rows: list[LayerRow]) -> list[tuple[str, Callable[[LayerRow], str]]]:
    """One column per perf event counted (per step), and the cache miss ratio where both cache events were."""
    names = next((list(r.counters) for r in rows if r.counters), [])
    columns: list[tuple[str, Callable[[LayerRow], str]]] = []
    for name in names:
        ns = name in NANOSECOND_EVENTS
        head, spec, scale = (f"{name} ms", ".2f", 1e-6) if ns else (name, ".0f", 1.0)
        columns.append((head, lambda r, n=name, f=spec, s=scale: _fmt((r.counters or {}).get(n), f, s)))
    if "cache-misses" in names and "cache-references" in names:
        columns.append(("miss %", lambda r: _fmt(r.cache_miss_pct, ".1f")))
    return columns


def roofline_table(report: LayerReport, rows: list[LayerRow]) -> Table:
    peak = report.peak
    ridge = f", ridge {peak.gemm_gflops / peak.copy_gbps:.1f} FLOP/B" if peak else ""
    table = Table(title=rich_text(_title(report) + f"  roofline{ridge}"), title_justify="left")
    columns: list[tuple[str, Callable[[LayerRow], str]]] = [
        ("layer", lambda r: _indent(r, report)),
        ("type", lambda r: r.type),
        ("ms", lambda r: _fmt(r.forward_ms + r.backward_ms, ".3f")),
        ("MFLOP", lambda r: _fmt(r.flops, ".1f", 1e-6) if r.flops else "-"),
        ("MB moved", lambda r: _fmt(r.bytes, ".1f", 1e-6)),
        ("FLOP/B", lambda r: _fmt(r.intensity_flop_per_byte, ".1f")),
        ("GFLOP/s", lambda r: _fmt(r.achieved_gflops, ".1f")),
        ("GB/s", lambda r: _fmt(r.achieved_gbps, ".1f")),
        ("roof GFLOP/s", lambda r: _fmt(r.attainable_gflops, ".1f")),
        ("bound", lambda r: r.bound or "-"),
        ("% of roof", lambda r: _fmt(r.roof_pct, ".1f")),
        ("% peak", lambda r: _fmt(r.peak_pct, ".1f")),
    ]
    for name, _ in columns:
        table.add_column(name, justify="left" if name in ("layer", "type", "bound") else "right")
    for row in rows:
        table.add_row(*(rich_text(render(row)) for _, render in columns))
    return table


def footer(report: LayerReport) -> list[str]:
    covered = 100.0 - report.other.share_pct
    lines = [f"layers cover {covered:.1f}% of the step; {report.other.name} {report.other.total_ms:.3f} ms"]
    if report.peak:
        p = report.peak
        lines.append(
            f"device peak: GEMM {p.gemm_gflops:.1f} GFLOP/s, copy {p.copy_gbps:.1f} GB/s "
            f"(measured {p.measured_at}; key {p.key})"
        )
    if report.power_source:
        idle = f", idle {report.idle_power_w:.2f} W taken off" if report.idle_power_w is not None else ""
        lines.append(
            f"energy from {report.power_source}, {report.energy_basis}{idle}: {report.step_energy_j:.4f} J per step "
            f"(gross {report.gross_step_energy_j:.4f} J)"
        )
    lines += report.notes
    return lines


def print_layers(
    report: LayerReport,
    *,
    roofline: bool = False,
    sort: str = "order",
    top: int | None = None,
    console: Console | None = None,
) -> None:
    rows = list(report.rows)
    if sort == "time":
        rows.sort(key=lambda r: r.total_ms, reverse=True)
    if top is not None:
        rows = rows[:top]
    console = console or Console()
    table = roofline_table(report, rows) if roofline else layer_table(report, rows)
    counted = [name for name, _ in counter_columns(rows)] if not roofline else []
    # Each counter column needs about 16 more; narrowed, a table with counters keeps them beside the times.
    narrow = console.width < _FULL_WIDTH + 16 * len(counted)
    if narrow:
        keep = ("layer", "type", "fwd ms", "bwd ms", *counted) if counted else _LAYERS_AT_80
        table = _narrowed(table, _ROOFLINE_AT_80 if roofline else keep)
    console.print(table)
    if report.kinds:
        console.print(kind_table(report))
    for line in footer(report):
        console.print(rich_text(line), highlight=False)
    if narrow:
        console.print(
            f"narrower than {_FULL_WIDTH} columns: only the columns above are shown; widen the terminal, or use --json",
            highlight=False,
        )


#: The width the full tables need; below it (a normal 80-column terminal, piped output) they keep these columns,
#: whole, rather than every column cut to a few characters.
_FULL_WIDTH = 100
_LAYERS_AT_80 = ("layer", "type", "fwd ms", "bwd ms", "share %", "GFLOP/s", "bound")
_ROOFLINE_AT_80 = ("layer", "type", "ms", "FLOP/B", "GFLOP/s", "bound", "% peak")


def _narrowed(table: Table, keep: tuple[str, ...]) -> Table:
    """``table`` with only the columns ``keep`` (those it has), each as wide as its widest cell, no vertical rules."""
    from rich import box

    from edgebench.report.fit import keep_whole

    narrow = Table(title=table.title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    kept = [c for c in table.columns if str(c.header) in keep]
    for column in kept:
        narrow.add_column(column.header, justify=column.justify)
    for cells in zip(*(list(c.cells) for c in kept), strict=True):
        narrow.add_row(*cells)
    return keep_whole(narrow, *(str(c.header) for c in kept if str(c.header) != "layer"))


def step_counter_rows(steps: list[Step]) -> list[dict[str, object]]:
    """A trial without layer spans (a ``--command`` trial): one row per step that carries perf counts."""
    return [
        {"phase": s.phase, "index": s.index, "ms": (s.end_ns - s.start_ns) / 1e6, "counters": s.counters}
        for s in steps
        if s.counters
    ]


def print_step_counters(title: str, rows: list[dict[str, object]], run: dict[str, float] | None) -> None:
    """The per-step perf counts of a trial that has no layers to split them over, and the whole run's."""
    names = list(next((r["counters"] for r in rows), None) or run or {})  # type: ignore[call-overload]
    table = Table(title=rich_text(title), title_justify="left")
    for head in ("step", "ms", *(f"{n} ms" if n in NANOSECOND_EVENTS else n for n in names)):
        table.add_column(rich_text(head), justify="left" if head == "step" else "right")

    def cells(counts: dict[str, float]) -> list[str]:
        return [f"{counts[n] / 1e6:.2f}" if n in NANOSECOND_EVENTS else f"{counts[n]:,.0f}" for n in names]

    for r in rows:
        table.add_row(f"{r['phase']} {r['index']}", f"{r['ms']:.2f}", *cells(r["counters"]))  # type: ignore[arg-type]
    if run:
        table.add_row("whole run", "", *cells(run))
    Console().print(table)
