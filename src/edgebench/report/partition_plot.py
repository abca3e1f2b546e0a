"""The partition plot: T_total (or E_total) per point with its components stacked, saved as PNG.

matplotlib is the optional extra ``edgebench[report]``; without it the command says which install gives it.
"""

from __future__ import annotations

from pathlib import Path

from edgebench.errors import UsageError
from edgebench.partition.analysis import PartitionAnalysis
from edgebench.partition.table4 import Table4

INSTALL = "pip install 'edgebench[report]'"


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
        ylabel = "time per pass (ms)" if a.mode == "infer" else "time per training step (ms)"
    else:
        parts = [
            ("E_mobile", [(r.mobile_energy_j or 0.0) * 1e3 for r in a.rows]),
            ("E_transfer", [r.transfer_energy_j * 1e3 for r in a.rows]),
        ]
        ylabel = "device energy (mJ)"
    fig, ax = plt.subplots(figsize=(max(6.0, len(x) * 0.08), 4.0))
    bottom = [0.0] * len(x)
    for label, values in parts:
        ax.bar(x, values, bottom=bottom, label=label, width=0.85)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.axvline(a.best.point, color="black", linestyle="--", linewidth=0.8, label=f"best: {a.best.layer}")
    ax.set_xlabel("partition point (0 = cloud only, last = mobile only)")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{a.model} b{a.batch_size} {a.mode} over {a.network.name}: {a.objective}")
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
    for i, (label, key) in enumerate((("mobile-only", "mobile_only"), ("cloud-only", "cloud_only"),
                                      ("mobile-cloud (best)", "mobile_cloud"))):  # fmt: skip
        xs = [j + (i - 1) * width for j in range(len(t.rows))]
        ax.bar(xs, [getattr(r, key) * scale for r in t.rows], width, label=label)
    for j, r in enumerate(t.rows):
        saved = "no saving stated" if r.saving_pct is None else f"{r.saving_pct:.1f}%"
        ax.annotate(f"{saved} ({r.basis})\n{r.partition_point}", (j + width, r.mobile_cloud * scale),
                    ha="center", va="bottom", fontsize="x-small")  # fmt: skip
    ax.set_xticks(range(len(t.rows)), [r.device for r in t.rows], fontsize="small")
    what = "latency" if t.objective == "latency" else "device energy"
    ax.set_ylabel(f"{what} per pass ({unit})")
    ax.set_title(f"Table 4: {t.model} over {t.network}, {what}")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
