"""One figure of the report as a PNG, PDF or SVG for a paper (matplotlib's Agg backend: no display needed).

Draws the same :class:`~edgebench.report.figures.Figure` records the HTML report draws, so a figure in a paper and
the report show the same numbers.  matplotlib is the optional extra ``edgebench[report]``.
"""

from __future__ import annotations

from pathlib import Path

from edgebench.errors import UsageError
from edgebench.report import figures as f

INSTALL = "pip install 'edgebench[report]'"
FORMATS = (".png", ".pdf", ".svg")


def pyplot():  # type: ignore[no-untyped-def]
    try:
        from edgebench.markup import plain_pyplot  # every text drawn as it is: no $...$ formulas

        plt = plain_pyplot()
    except ImportError:
        raise UsageError("plot", f"plots need matplotlib: {INSTALL}") from None
    return plt


def save_figure(fig: f.Figure, path: Path, fmt: str) -> None:
    """Draw ``fig`` into ``path`` as ``fmt`` (png, pdf or svg)."""
    plt = pyplot()
    width = 7.0 if not any(t.kind == "bar" for t in fig.traces) else max(7.0, 0.35 * len(fig.traces[0].x))
    figure, ax = plt.subplots(figsize=(width, 4.2))
    ax2 = ax.twinx() if fig.y2_label else None
    bottoms: dict[str, float] = {}
    for t in fig.traces:
        target = ax2 if t.axis == "y2" and ax2 is not None else ax
        ys = [float("nan") if v is None else v for v in t.y]
        if t.kind == "hist":
            target.hist(ys, bins=min(30, max(5, len(ys) // 2)), label=t.name, color="#4c72b0", edgecolor="white")
        elif t.kind == "bar":
            base = [bottoms.get(str(x), 0.0) for x in t.x] if t.stack else None
            target.bar([str(x) for x in t.x], ys, bottom=base, label=t.name)
            for x, y in zip(t.x, ys, strict=True):
                bottoms[str(x)] = bottoms.get(str(x), 0.0) + (y if y == y else 0.0)
        elif t.name == "best per model":
            target.scatter(t.x, ys, marker="*", s=160, color="black", zorder=5, label=t.name)
        elif t.kind == "markers":
            target.plot(t.x, ys, "o", label=t.name)
        else:
            style = "--" if t.axis == "y2" else "-"  # temperatures beside clocks: dashed
            target.plot(t.x, ys, style if len(t.x) > 60 else style + "o", linewidth=1.0, markersize=3, label=t.name)
    for x in fig.vlines:
        ax.axvline(x, color="black", alpha=0.3, linewidth=0.6, linestyle=":")
    for y, label in fig.hlines:
        ax.axhline(y, color="#555", linestyle="--", linewidth=1.0, label=label)
    for span in fig.spans:
        color = {"throttle": "tab:red", "idle": "tab:gray"}.get(span.kind, "tab:green")
        ax.axvspan(span.x0, span.x1, color=color, alpha=0.15, label=span.label)
    if any(t.kind == "bar" for t in fig.traces):
        ax.tick_params(axis="x", labelrotation=70, labelsize=7)
    ax.set_title(fig.title, fontsize=10)
    ax.set_xlabel(fig.x_label)
    ax.set_ylabel(fig.y_label)
    values = [v for t in fig.traces if t.axis == "y" and t.kind != "hist" for v in t.y if v is not None and v == v]
    if values and min(values) >= 0:
        ax.set_ylim(bottom=0)  # from zero, as the HTML report draws it
    if fig.x_log:
        ax.set_xscale("log")
    if ax2 is not None:
        ax2.set_ylabel(fig.y2_label)
    handles, labels = ax.get_legend_handles_labels()
    if ax2 is not None:
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    unique = dict(zip(labels, handles, strict=True))
    if unique:
        ax.legend(unique.values(), unique.keys(), fontsize="x-small", loc="best")
    if fig.notes:
        figure.text(0.01, 0.005, "\n".join(fig.notes), fontsize=6, color="#444", va="bottom", wrap=True)
    figure.tight_layout(rect=(0, 0.04 * len(fig.notes), 1, 1))
    figure.savefig(path, dpi=150, format=fmt)
    plt.close(figure)
