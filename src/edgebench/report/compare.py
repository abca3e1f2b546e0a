"""Comparing two trials, two sweeps or two devices: each measurement side by side, the ratio, and significance.

Significance is decided as pyperf does, with a two-sample t-test on the individual values, here every measured
step time (Welch's test: the two sides need not have the same variance); a difference is significant when
p < 0.05.  Measurements that are one number per trial (memory, utilization, energy) get a ratio but no test.

Groups (sweeps, devices) are matched configuration by configuration: trials with the same model, batch size,
threads, core mask, frequency and precision are compared (devices: model, batch size, threads and precision, since
core numbers mean different cores on different devices).  When a side holds several trials of one configuration,
their step times are pooled (as pyperf pools the values of all its runs) and the other measurements averaged.
The summary is the geometric mean of the step-time ratios over the matched configurations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from edgebench.errors import UsageError
from edgebench.host.cpuset import format_cpu_list, format_mask
from edgebench.markup import rich_text
from edgebench.records.events import measured_phase, parse_events, steps_of
from edgebench.records.result import TrialResult
from edgebench.store import Store
from edgebench.units import MIB

Kind = Literal["trial", "sweep", "device"]
ALPHA = 0.05
MATCH_FIELDS = ("model", "batch_size", "threads", "mask", "freq_khz", "precision", "mode", "backend")
DEVICE_MATCH_FIELDS = ("model", "batch_size", "threads", "precision", "mode", "backend")
#: What makes two trials different work, not the same work measured twice: a pair differing in one is marked.
UNLIKE_FIELDS = ("mode", "backend", "precision")


def unlike(a: TrialResult, b: TrialResult) -> list[str]:
    """How ``a`` and ``b`` differ in what they ran (``mode: train vs infer``); empty for a like-for-like pair."""
    return [
        f"{name}: {getattr(a.trial, name)} vs {getattr(b.trial, name)}"
        for name in UNLIKE_FIELDS
        if getattr(a.trial, name) != getattr(b.trial, name)
    ]


def unlike_warning(a: TrialResult, b: TrialResult) -> str | None:
    """The one line that marks a pair of unlike trials wherever their ratio is shown."""
    differ = unlike(a, b)
    if not differ:
        return None
    return (
        f"A and B ran different work ({'; '.join(differ)}): the ratios compare a {a.trial.backend} "
        f"{a.trial.mode} trial with a {b.trial.backend} {b.trial.mode} trial, not one setup measured twice"
    )


@dataclass(frozen=True)
class Side:
    ref: str
    kind: Kind
    results: list[TrialResult]

    @property
    def title(self) -> str:
        return f"{self.kind} {self.ref}"


def resolve(store: Store, ref: str) -> Side:
    """A sweep id, a trial id or unique prefix of one, or a hostname, in that order."""
    if store.sweep_exists(ref):
        return Side(ref, "sweep", [r for r in store.query(sweep_id=ref) if r.ok])
    ids = store.trial_ids(ref)
    if len(ids) == 1:
        return Side(ids[0], "trial", [store.get(ids[0])])
    if len(ids) > 1:
        shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
        raise UsageError(ref, f"{len(ids)} trials start with it ({shown}); give more of the id")
    if ref in store.hostnames():
        return Side(ref, "device", [r for r in store.query(hostname=ref) if r.ok])
    raise UsageError(ref, f"no sweep, trial id or hostname in {store.path} matches it")


def step_times_ms(store: Store, trial_id: str, phase: str = "train") -> np.ndarray:
    steps = steps_of(parse_events(store.series(trial_id, "events")), phase)
    return np.asarray([(s.end_ns - s.start_ns) / 1e6 for s in steps], dtype=np.float64)


@dataclass(frozen=True)
class Verdict:
    """Ratio B/A of the means and, where per-step values exist, Welch's t-test on them."""

    ratio: float | None
    p_value: float | None = None

    @property
    def significant(self) -> bool | None:
        return None if self.p_value is None else self.p_value < ALPHA

    def text(self, lower_is_better: bool = True) -> str:
        if self.ratio is None or self.p_value is None:
            return "-"
        if not self.significant:
            return f"not significant (p={self.p_value:.2g})"
        slower = self.ratio > 1 if lower_is_better else self.ratio < 1
        factor = self.ratio if self.ratio >= 1 else 1 / self.ratio
        return f"{factor:.2f}x {'slower' if slower else 'faster'} (p={self.p_value:.2g})"


def welch(a: np.ndarray, b: np.ndarray) -> float | None:
    """Two-sided p-value of Welch's t-test; ``None`` when either side has fewer than two values or no spread."""
    from scipy import stats

    if len(a) < 2 or len(b) < 2:
        return None
    if np.std(a) == 0 and np.std(b) == 0:
        return 0.0 if a.mean() != b.mean() else 1.0
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a == 0 or math.isnan(a) or math.isnan(b):
        return None
    return b / a


@dataclass(frozen=True)
class Measure:
    name: str
    get: Callable[[TrialResult], float | None]
    fmt: str = "{:.2f}"
    #: the event phase whose step times back a t-test, if any
    phase: str | None = None
    lower_is_better: bool = True


MEASURES = (
    Measure("train step mean (ms)", lambda r: r.latency.step_ms.mean if r.latency.step_ms else None, phase="train"),
    Measure("train step median (ms)", lambda r: r.latency.step_ms.median if r.latency.step_ms else None),
    Measure("train step p95 (ms)", lambda r: r.latency.step_ms.p95 if r.latency.step_ms else None),
    Measure("throughput (samples/s)", lambda r: r.latency.throughput_sps, "{:.1f}", lower_is_better=False),
    Measure("inference mean (ms)", lambda r: r.latency.infer_ms.mean if r.latency.infer_ms else None, phase="infer"),
    Measure("cpu util mean (%)", lambda r: r.cpu.util_pct.mean if r.cpu.util_pct else None, "{:.1f}"),
    Measure("worker cpu (%)", lambda r: r.cpu.process_pct, "{:.0f}"),
    Measure("peak memory (MiB)", lambda r: r.memory.peak_bytes / MIB if r.memory.peak_bytes else None, "{:.1f}"),
    Measure("energy (J)", lambda r: r.energy.energy_j, "{:.4g}"),
    Measure("energy per sample (J)", lambda r: r.energy.per_sample_j, "{:.4g}"),
    Measure("avg power (W)", lambda r: r.energy.avg_power_w, "{:.3g}"),
    Measure(
        "max temperature (°C)",
        lambda r: max((v.max for v in r.temperature_c.values()), default=None) if r.temperature_c else None,
        "{:.1f}",
    ),
    Measure("thermally throttled (s)", lambda r: r.throttling.throttled_s if r.throttling else None, "{:.1f}"),
)


@dataclass
class Row:
    """One measurement (trial comparison) or one configuration (group comparison)."""

    label: str
    a: str
    b: str
    verdict: Verdict
    lower_is_better: bool = True
    extra: dict[str, float | None] = field(default_factory=dict)


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def compare_trials(store: Store, a: TrialResult, b: TrialResult) -> list[Row]:
    rows = []
    for m in MEASURES:
        va, vb = m.get(a), m.get(b)
        if va is None and vb is None:
            continue
        p = None
        if m.phase is not None:
            phase_a, phase_b = _phase(m.phase, a), _phase(m.phase, b)
            p = welch(step_times_ms(store, a.trial_id, phase_a), step_times_ms(store, b.trial_id, phase_b))
        shown_a = m.fmt.format(va) if va is not None else "-"
        shown_b = m.fmt.format(vb) if vb is not None else "-"
        rows.append(Row(m.name, shown_a, shown_b, Verdict(ratio(va, vb), p), m.lower_is_better))
    return rows


def _phase(phase: str, r: TrialResult) -> str:
    """The events behind a step measure: an inference trial's measured steps are its ``infer`` passes."""
    return measured_phase(r.trial.mode) if phase == "train" else phase


def match_key(r: TrialResult, fields: tuple[str, ...]) -> tuple[Any, ...]:
    values = {
        "model": r.trial.model,
        "batch_size": r.trial.batch_size,
        "threads": r.trial.threads,
        "mask": format_mask(r.trial.cores) if r.trial.cores else None,
        "cores": format_cpu_list(r.trial.cores) if r.trial.cores else None,
        "freq_khz": r.trial.freq_khz,
        "precision": r.trial.precision,
        "backend": r.trial.backend,
        "device": r.trial.device,
        "mode": r.trial.mode,
    }
    return tuple(values[f] for f in fields)


def key_label(key: tuple[Any, ...], fields: tuple[str, ...]) -> str:
    parts = []
    for name, value in zip(fields, key, strict=True):
        if value is None or (name, value) in (("precision", "fp32"), ("mode", "train"), ("backend", "torch")):
            continue
        prefix = {"batch_size": "b", "threads": "t", "mask": "mask ", "freq_khz": "kHz "}.get(name, "")
        parts.append(f"{prefix}{value}" if name != "freq_khz" else f"{value / 1e3:g}MHz")
    return " ".join(parts)


@dataclass
class GroupComparison:
    rows: list[Row]
    only_a: int
    only_b: int
    geometric_mean: float | None
    fields: tuple[str, ...]


def compare_groups(store: Store, a: Side, b: Side, fields: tuple[str, ...]) -> GroupComparison:
    def grouped(side: Side) -> dict[tuple[Any, ...], list[TrialResult]]:
        out: dict[tuple[Any, ...], list[TrialResult]] = {}
        for r in side.results:
            out.setdefault(match_key(r, fields), []).append(r)
        return out

    ga, gb = grouped(a), grouped(b)
    shared = [k for k in ga if k in gb]
    rows, ratios = [], []
    for key in shared:
        steps_a = np.concatenate([step_times_ms(store, r.trial_id) for r in ga[key]])
        steps_b = np.concatenate([step_times_ms(store, r.trial_id) for r in gb[key]])
        mean_a = float(steps_a.mean()) if len(steps_a) else _mean([r.latency.step_ms.mean for r in ga[key]])
        mean_b = float(steps_b.mean()) if len(steps_b) else _mean([r.latency.step_ms.mean for r in gb[key]])
        verdict = Verdict(ratio(mean_a, mean_b), welch(steps_a, steps_b))
        if verdict.ratio is not None:
            ratios.append(verdict.ratio)
        extra = {}
        for name, getter in (
            ("throughput", lambda r: r.latency.throughput_sps),
            ("peak memory", lambda r: r.memory.peak_bytes),
            ("energy", lambda r: r.energy.energy_j),
        ):
            extra[name] = ratio(_mean([getter(r) for r in ga[key]]), _mean([getter(r) for r in gb[key]]))
        n_a, n_b = len(ga[key]), len(gb[key])
        rows.append(
            Row(
                key_label(key, fields),
                f"{mean_a:.2f}" + (f" ({n_a} trials)" if n_a > 1 else ""),
                f"{mean_b:.2f}" + (f" ({n_b} trials)" if n_b > 1 else ""),
                verdict,
                extra=extra,
            )
        )
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    return GroupComparison(rows, len(ga) - len(shared), len(gb) - len(shared), geo, fields)


def row_json(r: Row) -> dict[str, object]:
    """One row of ``compare --json``: its label, both sides, the ratio and the t-test."""
    return {
        "label": r.label,
        "a": r.a,
        "b": r.b,
        "ratio": r.verdict.ratio,
        "p_value": r.verdict.p_value,
        "significant": r.verdict.significant,
        **({"ratios": r.extra} if r.extra else {}),
    }


def print_trial_comparison(a: Side, b: Side, rows: list[Row], warning: str | None) -> None:
    """Two trials: each measurement of B next to A's, the ratio and the t-test; the unlike pair's warning under."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=rich_text(f"A = {a.title}   B = {b.title}"), title_justify="left")
    for column in ("measurement", "A", "B", "B/A", "t-test on steps"):
        table.add_column(column, justify="left" if column in ("measurement", "t-test on steps") else "right")
    for r in rows:
        shown = f"{r.verdict.ratio:.3f}" if r.verdict.ratio is not None else "-"
        table.add_row(*map(rich_text, (r.label, r.a, r.b, shown, r.verdict.text(r.lower_is_better))))
    Console().print(table)
    if warning:
        print(f"warning: {warning}")


def print_group_comparison(a: Side, b: Side, result: GroupComparison) -> None:
    """Two groups: each paired configuration's step time, ratios and t-test, their geometric mean, what is unpaired."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=rich_text(f"A = {a.title}   B = {b.title}   (step time, ms)"), title_justify="left")
    for column in ("configuration", "A", "B", "B/A", "t-test", "samples/s B/A", "memory B/A", "energy B/A"):
        table.add_column(column, justify="left" if column in ("configuration", "t-test") else "right")
    for r in result.rows:
        extra = [f"{v:.3f}" if v is not None else "-" for v in r.extra.values()]
        shown = f"{r.verdict.ratio:.3f}" if r.verdict.ratio is not None else "-"
        table.add_row(*map(rich_text, (r.label, r.a, r.b, shown, r.verdict.text(), *extra)))
    console.print(table)
    if result.geometric_mean is not None:
        console.print(f"geometric mean of step-time ratios B/A over {len(result.rows)} configurations: "
                      f"{result.geometric_mean:.3f}")  # fmt: skip
    if result.only_a or result.only_b:
        console.print(rich_text(f"not compared: {result.only_a} configurations only in A, {result.only_b} only in B "
                                f"(paired on {', '.join(result.fields)})"))  # fmt: skip
