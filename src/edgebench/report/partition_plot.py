"""The partition plot: T_total (or E_total) per point with its components stacked, saved as PNG.

A plot says what the printed table says of its figures: the basis of the device's (measured, estimated or
predicted), and every warning (a disturbed trial that decides nothing, a saving that cannot be stated), so a
figure copied into a paper does not lose what the table warned of.

matplotlib is the optional extra ``edgebench[report]``; without it the command says which install gives it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

from edgebench.errors import UsageError
from edgebench.partition.analysis import PartitionAnalysis
from edgebench.partition.table4 import Table4, Table4Row, basis_of
from edgebench.report.partition import saving_figure

INSTALL = "pip install 'edgebench[report]'"
#: Characters of a warning line drawn under a plot's title, per inch of the figure's width (at the "small" font).
WARNING_CHARS_PER_INCH = 11


def device_label(a: PartitionAnalysis) -> str:
    """The y-axis label: the quantity per pass or step, and the device figures' basis where it is not measured."""
    if a.objective == "latency":
        label = "time per pass (ms)" if a.mode == "infer" else "time per training step (ms)"
    else:
        label = "device energy (mJ)"
    basis = "predicted" if a.device_basis == "predicted" else basis_of(a)
    return label if basis == "measured" else f"{label}, {basis}"


def plot_warnings(notes: Sequence[str]) -> list[str]:
    """The warnings among a table's ``notes`` (those the table prints as ``warning: ...``, the prefix dropped), which
    the plot draws under its title."""
    return [n.removeprefix("warning: ") for n in notes if n.startswith("warning: ")]


def table4_annotation(r: Table4Row) -> str:
    """What is written above a device's bars: the saving (with its interval where repeats give one), its basis, the
    partition point, and whether the row decides nothing (its trial disturbed)."""
    lines = [f"{saving_figure(r) or 'no saving stated'} ({r.basis})", r.partition_point]
    if r.disturbed is not None:
        lines.append("disturbed: decides nothing")
    return "\n".join(lines)


def _title(title: str, warnings: list[str], width_in: float) -> str:
    chars = int(width_in * WARNING_CHARS_PER_INCH)
    wrapped = [line for w in warnings for line in textwrap.wrap(f"warning: {w}", chars)]
    return "\n".join([title, *wrapped])


def save_plot(a: PartitionAnalysis, path: Path) -> None:
    try:
        from edgebench.markup import plain_pyplot  # every text drawn as it is: no $...$ formulas

        plt = plain_pyplot()
    except ImportError:
        raise UsageError("--plot", f"the plot needs matplotlib: {INSTALL}") from None
    x = [r.point for r in a.rows]
    if a.objective == "latency":
        parts = [
            ("T_mobile", [r.mobile_ms for r in a.rows]),
            ("T_transfer", [r.transfer_ms for r in a.rows]),
            ("T_cloud", [r.cloud_ms for r in a.rows]),
        ]
    else:
        parts = [
            ("E_mobile", [(r.mobile_energy_j or 0.0) * 1e3 for r in a.rows]),
            ("E_transfer", [r.transfer_energy_j * 1e3 for r in a.rows]),
        ]
    warnings = plot_warnings(a.notes)
    fig, ax = plt.subplots(figsize=(max(6.0, len(x) * 0.08), 4.0))
    bottom = [0.0] * len(x)
    for label, values in parts:
        ax.bar(x, values, bottom=bottom, label=label, width=0.85)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.axvline(a.best.point, color="black", linestyle="--", linewidth=0.8, label=f"best: {a.best.layer}")
    ax.set_xlabel("partition point (0 = cloud only, last = mobile only)")
    ax.set_ylabel(device_label(a))
    title = f"{a.model} b{a.batch_size} {a.mode} over {a.network.name}: {a.objective}"
    ax.set_title(_title(title, warnings, fig.get_figwidth()), fontsize="small" if warnings else None)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def save_table4_plot(t: Table4, path: Path) -> None:
    """Grouped bars per device: mobile-only, cloud-only and the best mobile-cloud, the saving written above."""
    try:
        from edgebench.markup import plain_pyplot  # every text drawn as it is: no $...$ formulas

        plt = plain_pyplot()
    except ImportError:
        raise UsageError("--plot", f"the plot needs matplotlib: {INSTALL}") from None
    scale, unit = (1.0, "ms") if t.objective == "latency" else (1e3, "mJ")
    fig, ax = plt.subplots(figsize=(max(5.0, 1.8 * len(t.rows) + 2), 4.0))
    width = 0.27
    # a disturbed row's bars are hatched and faded: shown, as the table shows them, but marked as deciding nothing
    hatch = ["//" if r.disturbed is not None else None for r in t.rows]
    for i, (label, key) in enumerate((("mobile-only", "mobile_only"), ("cloud-only", "cloud_only"),
                                      ("mobile-cloud (best)", "mobile_cloud"))):  # fmt: skip
        xs = [j + (i - 1) * width for j in range(len(t.rows))]
        bars = ax.bar(xs, [getattr(r, key) * scale for r in t.rows], width, label=label)
        for bar, mark in zip(bars, hatch, strict=True):
            if mark is not None:
                bar.set_hatch(mark)
                bar.set_alpha(0.45)
    for j, r in enumerate(t.rows):
        ax.annotate(table4_annotation(r), (j + width, r.mobile_cloud * scale), ha="center", va="bottom",
                    fontsize="x-small")  # fmt: skip
    ax.set_xticks(range(len(t.rows)), [r.device for r in t.rows], fontsize="small")
    what = "latency" if t.objective == "latency" else "device energy"
    ax.set_ylabel(f"{what} per pass ({unit})")
    warnings = plot_warnings(t.notes)
    ax.set_title(_title(f"Table 4: {t.model} over {t.network}, {what}", warnings, fig.get_figwidth()),
                 fontsize="small" if warnings else None)  # fmt: skip
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
