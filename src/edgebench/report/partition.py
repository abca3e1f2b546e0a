"""The terminal view of a partition analysis: one row per point, the choice marked, then the comparisons."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from edgebench.markup import rich_text
from edgebench.partition.analysis import PartitionAnalysis
from edgebench.partition.generation import GenerationPartition
from edgebench.partition.solver import PointCost
from edgebench.partition.table4 import Table4, Table4Row
from edgebench.units import format_size


def _ms(v: float) -> str:
    return f"{v:.2f}"


def _mj(v: float | None) -> str:
    return "-" if v is None else f"{v * 1e3:.2f}"


def _where(r: PointCost) -> str:
    if r.kind == "cloud-only":
        return "(input: cloud only)"
    if r.kind == "mobile-only":
        return f"{r.layer} (mobile only)"
    return r.layer


def partition_table(a: PartitionAnalysis) -> Table:
    title = (
        f"{a.model}  batch {a.batch_size}  {a.mode}  over {a.network.name} "
        f"({a.network.up_mbps:g}/{a.network.down_mbps:g} Mbps up/down, RTT {a.network.rtt_ms:g} ms)  "
        f"objective: {a.objective}"
    )
    predicted = a.device_basis == "predicted"
    if predicted:
        title = f"PREDICTED device costs (no trial of this configuration was measured)  {title}"
    table = Table(title=rich_text(title), title_justify="left")
    dev = " (predicted)" if predicted else ""
    cloud = " (predicted)" if a.cloud_predicted else ""
    columns: list[tuple[str, Callable[[PointCost], str]]] = [
        ("", lambda r: "*" if r.point == a.best.point else ""),
        ("#", lambda r: str(r.point)),
        ("last layer on device", _where),
        ("crossing", lambda r: "" if r.tensors <= 1 else f"{r.tensors} (branch)"),
        (f"T_mobile ms{dev}", lambda r: _ms(r.mobile_ms)),
        ("sent", lambda r: format_size(r.up_bytes) if r.up_bytes else "0"),
        ("back", lambda r: format_size(r.down_bytes) if r.down_bytes else "0"),
        ("T_transfer ms", lambda r: _ms(r.transfer_ms)),
        (f"T_cloud ms{cloud}", lambda r: _ms(r.cloud_ms)),
        (f"T_total ms{dev}", lambda r: _ms(r.total_ms)),
        ("E_mobile mJ", lambda r: _mj(r.mobile_energy_j)),
        ("E_transfer mJ", lambda r: _mj(r.transfer_energy_j)),
        ("E_total mJ", lambda r: _mj(r.total_energy_j)),
    ]
    for name, _ in columns:
        table.add_column(name, justify="left" if name in ("", "last layer on device", "crossing") else "right")
    for r in a.rows:
        table.add_row(*(rich_text(f(r)) for _, f in columns), style="bold" if r.point == a.best.point else None)
    return table


def _vs(a: PartitionAnalysis, other: PointCost) -> str:
    best, base = a.best.value(a.objective), other.value(a.objective)
    if best is None or base is None:
        return "-"
    unit, scale = ("ms", 1.0) if a.objective == "latency" else ("mJ", 1e3)
    ratio = f", {base / best:.2f}x" if best > 0 else ""
    return f"{base * scale:.2f} {unit} ({(base - best) * scale:+.2f} {unit} against the best{ratio})"


def footer(a: PartitionAnalysis) -> list[str]:
    unit, scale = ("ms", 1.0) if a.objective == "latency" else ("mJ", 1e3)
    value = a.best.value(a.objective) or 0.0
    basis = " (predicted)" if a.device_basis == "predicted" else ""
    lines = [
        f"best ({a.objective}){basis}: point {a.best.point}, {_where(a.best)}: {value * scale:.2f} {unit}",
        f"mobile only{basis}: {_vs(a, a.mobile_only)}",
        f"cloud only{' (predicted)' if a.cloud_predicted else ''}:  {_vs(a, a.cloud_only)}",
        f"cut points: {a.single_tensor_points} cross one tensor, {a.branch_points} cut inside a branch",
    ]
    dag = a.dag_cut
    if dag.frontier_misses:
        lines.append(
            f"the chain of frontiers MISSES the DAG's best cut (DADS min s-t cut): {dag.cut.layer}: "
            f"better by {dag.gain * scale:.2f} {unit}"
        )
    else:
        lines.append("the DAG's best cut (DADS min s-t cut) is a frontier: the chain of frontiers does not miss it")
    lines.append(f"device times: {a.mobile_source}")
    lines.append(f"server times: {a.cloud_source}")
    lines.append(f"device energy: {a.energy_source or 'unknown'}; radio: Huang et al.'s model ({a.network.source})")
    if a.transfer_dtype:
        lines.append(f"floating-point tensors sent as {a.transfer_dtype}")
    for seg in a.sweep or []:
        where = "(input: cloud only)" if seg.kind == "cloud-only" else seg.layer
        lines.append(
            f"sweep {seg.from_mbps:.3g}-{seg.to_mbps:.3g} Mbps: best point {seg.point} {where} "
            f"({seg.value_at_from * scale:.2f} -> {seg.value_at_to * scale:.2f} {unit})"
        )
    lines += [f"note: {n}" for n in a.notes]
    return lines


def print_partition(a: PartitionAnalysis, console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:  # a pipe or a file: keep every column whole rather than 80 wide
            console = Console(width=200)
    console.print(partition_table(a))
    for line in footer(a):
        console.print(line, highlight=False, markup=False)


def saving_figure(r: Table4Row) -> str | None:
    """A Table 4 row's saving as the table and its plot write it, with its interval where repeats give one; None where
    no saving can be stated."""
    if r.saving_pct is None:
        return None
    interval = ""
    if r.saving_low_pct is not None and r.saving_high_pct is not None:
        interval = f" [{r.saving_low_pct:.1f}, {r.saving_high_pct:.1f}]"
    return f"{r.saving_pct:.1f}%{interval}"


def print_table4(t: Table4, console: Console | None = None) -> None:
    """DNNTune's Table 4 as the paper prints it: one row per device."""
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=200)
    what = "latency (ms)" if t.objective == "latency" else "device energy (J)"
    saving = "latency saving" if t.objective == "latency" else "energy saving"
    table = Table(title=rich_text(f"{t.model} over {t.network}: {what} per device"), title_justify="left")
    for name in ("device", "mobile-only", "cloud-only", "mobile-cloud", saving, "partition point", "basis", "trial"):
        table.add_column(name, justify="left" if name in ("device", "partition point", "basis", "trial") else "right")
    digits = 2 if t.objective == "latency" else 3
    for r in t.rows:
        saved = saving_figure(r) or "-"
        if r.saving_low_pct is not None and r.saving_high_pct is not None:
            saved += f" ({r.repeats} repeats)"
        if r.disturbed is not None:
            saved += " (disturbed: decides nothing)"
        table.add_row(rich_text(r.device), f"{r.mobile_only:.{digits}f}", f"{r.cloud_only:.{digits}f}",
                      f"{r.mobile_cloud:.{digits}f}", rich_text(saved), rich_text(r.partition_point),
                      rich_text(r.basis), rich_text(r.trial_id))  # fmt: skip
    console.print(table)
    lines = [f"{saving}: (mobile-only - mobile-cloud) / mobile-only; mobile-cloud is the best point, an end included"]
    if t.objective == "energy":
        lines.append("basis: measured = the device's power sensor, estimated = --estimate-energy's utilization "
                     "model; the radio's energy is Huang et al.'s model in every row")  # fmt: skip
    lines.append(f"server: {t.cloud_source}")
    lines += [f"{r.device}: {r.source}" for r in t.rows]
    lines += [f"note: {n}" for n in t.notes]
    for line in lines:
        console.print(line, highlight=False, markup=False)


def print_generation_partition(split: GenerationPartition, console: Console | None = None) -> None:
    """A language model's generation split per token: each point's bytes, KV cache on each side, and times."""
    console = console or Console()
    title = (
        f"{split.model}: generation split between device and server, {split.context_tokens}-token context, "
        f"{split.new_tokens} new tokens, over {split.network.name}"
    )
    table = Table(title=title, title_justify="left")
    for name in ("", "point", "prompt up", "per token up/down", "KV device", "KV server", "TTFT ms", "ms/token",
                 "total ms"):  # fmt: skip
        table.add_column(name, justify="left" if name in ("", "point") else "right")
    for p in split.points:
        mark = "*" if p == split.best_total else ""
        table.add_row(mark, rich_text(p.label), format_size(p.prompt_up_bytes),
                      f"{format_size(p.token_up_bytes)} / {format_size(p.token_down_bytes)}",
                      format_size(p.kv_cache_device_bytes), format_size(p.kv_cache_server_bytes),
                      _ms(p.ttft_ms), _ms(p.ms_per_token), _ms(p.total_ms))  # fmt: skip
    console.print(table)
    console.print(
        rich_text(f"best for the whole generation: {split.best_total.label} ({split.best_total.total_ms:.1f} ms); "
                  f"for the first token: {split.best_ttft.label} ({split.best_ttft.ttft_ms:.1f} ms)"),
        highlight=False,
    )  # fmt: skip
    for h in split.hand_overs:
        console.print(rich_text(f"hand-over, {h.label}: the KV cache ({format_size(h.kv_cache_bytes)}) crosses once in "
                      f"{h.kv_transfer_ms:.1f} ms; TTFT {h.ttft_ms:.1f} ms, {h.ms_per_token:.2f} ms/token, total "
                      f"{h.total_ms:.1f} ms"), highlight=False)  # fmt: skip
    console.print(rich_text(f"device times: {split.device_source}"), highlight=False)
    console.print(rich_text(f"server times: {split.cloud_source}; link: {split.network.source}"), highlight=False)
    for note in split.notes:
        console.print(rich_text(f"note: {note}"), highlight=False)
