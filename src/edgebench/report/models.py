"""What ``edgebench models`` prints: the workloads by domain (input, parameters, FLOPs, the published figures beside
ours), the published figures with their sources, and the models the MNN backend refuses and why.  At 80 columns the
names, inputs and numbers stay whole (the sources become numbered notes under the table)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from edgebench.markup import rich_text

if TYPE_CHECKING:
    from rich.table import Table

    from edgebench.report.catalog import ModelInfo


def _si(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= factor:
            return f"{value / factor:.3g}{prefix}{unit}"
    return f"{value:.3g}{unit}"


def print_models(infos: list[ModelInfo], mnn: dict[str, dict[str, str | None]], mnn_source: str) -> None:
    """The workloads table, the references table and its sources, then MNN's refusals."""
    from rich.console import Console

    from edgebench.report.fit import keep_whole

    console = Console()
    wide = console.width >= _WIDE
    models_table = keep_whole(_models_table(infos, with_published=wide), "input", "out", "params", "fwd FLOPs")
    models_table.columns[0].min_width = 2 + max(len(i.name) for i in infos)  # a domain's row may wrap, no name
    console.print(keep_whole(models_table, "train FLOPs"))
    references, sources = _references_table(infos, sources_inline=wide)
    console.print(keep_whole(references, "model", "figure", "at", "ours", "deviation", "tol.", "src"))
    for number, source in enumerate(sources, start=1):
        console.print(f"[{number}] {source}", highlight=False, markup=False)
    _print_mnn_refusals(console, mnn, mnn_source)


def _print_mnn_refusals(console: object, mnn: dict[str, dict[str, str | None]], source: str) -> None:
    """The models ``--backend mnn`` refuses, per mode, with MNN's (or the backend's) reason; ``source`` says where the
    answer comes from."""
    refused = []
    for name, entry in mnn.items():
        if entry["train"] and entry["train"] == entry["infer"]:
            refused.append((name, "train, infer", entry["train"]))
        else:
            refused += [(name, mode, entry[mode]) for mode in ("train", "infer") if entry[mode]]
    print_ = console.print  # type: ignore[attr-defined]
    print_(
        f"\nMNN backend ({source}): " + ("accepts every model listed" if not refused else "refuses, or could not tell")
    )
    for name, mode, reason in refused:
        print_(f"  {name} ({mode}): {reason}", highlight=False, markup=False)


#: Marks a published-shape preset (a model's configuration, random weights) in every table.
SHAPE_MARK = " (shape only)"

#: Narrower than this (a normal terminal, piped output), the published figures are shown once, in the references
#: table, and their sources as numbered notes under it, so that names, inputs and numbers stay whole at 80 columns.
_WIDE = 140


def _quantity(quantity: str) -> str:
    return {"params": "params", "forward_macs": "fwd MACs", "forward_flops": "fwd FLOPs"}.get(quantity, quantity)


def _models_table(infos: list[ModelInfo], with_published: bool = True) -> Table:
    """One row per workload under a row naming its domain."""
    from rich import box
    from rich.table import Table

    title = "Workloads by domain (FLOPs per sample; a multiply-add is 2 FLOPs)"
    caption = f"{SHAPE_MARK} shape only: a published model's configuration with random weights (none fetched)"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
                  caption=caption if any(i.shape_only for i in infos) else None, caption_justify="left")  # fmt: skip
    columns = ["model", "input", "out", "params", "fwd FLOPs", "train FLOPs"]
    columns += ["published (ours vs. it)"] if with_published else []
    for column in columns:
        table.add_column(column, justify="right" if "FLOPs" in column or column in ("params", "out") else "left")
    domain = None
    for info in infos:
        if info.domain != domain:
            domain = info.domain
            table.add_row(f"[bold]{rich_text(domain)}[/bold]")
        refs = []
        for r in info.references:
            dev = "" if r.deviation_pct is None else f" {r.deviation_pct:+.1f}%"
            flag = "[red]![/red]" if r.within_tolerance is False else ""
            refs.append(f"{_quantity(r.quantity)} {_si(r.value)}{dev}{flag}")
        table.add_row(
            rich_text(f"  {info.name}{SHAPE_MARK if info.shape_only else ''}"),
            f"{info.preset} {'x'.join(map(str, info.input_shape))}",
            str(info.num_classes),
            _si(info.params),
            _si(info.forward_flops),
            _si(info.train_flops_per_sample),
            *(["; ".join(refs) or "-"] if with_published else []),
        )
    return table


def _references_table(infos: list[ModelInfo], sources_inline: bool = True) -> tuple[Table, list[str]]:
    """The published figures beside ours; with ``sources_inline=False`` each row names its source by number and
    the sources (long: configuration and citation) come back to be printed under the table."""
    from rich import box
    from rich.table import Table

    table = Table(
        title="Published figures and where they come from", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False
    )
    last = "configuration; source" if sources_inline else "src"
    for column in ("model", "figure", "at", "ours", "deviation", "tol.", last):
        table.add_column(column, justify="right" if column in ("figure", "ours", "deviation", "tol.") else "left")
    sources: list[str] = []
    for info in infos:
        for r in info.references:
            deviation = "-" if r.deviation_pct is None else f"{r.deviation_pct:+.2f}%"
            if r.within_tolerance is False:
                deviation = f"[red]{deviation}[/red]"
            source = f"{r.config}; {r.source}"
            if not sources_inline:
                if source not in sources:
                    sources.append(source)
                source = f"[{sources.index(source) + 1}]"
            table.add_row(
                rich_text(f"{info.name}{SHAPE_MARK if info.shape_only else ''}"),
                f"{_quantity(r.quantity)} {_si(r.value)}",
                r.preset,
                _si(r.measured),
                deviation,
                f"{100 * r.rel_tol:g}%",
                rich_text(source),
            )
    return table, sources
