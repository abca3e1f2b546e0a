"""Comparing two trials, two configurations, two sweeps or two devices: each measurement side by side, the ratio,
and a decision taken where the variance lives.

A decision rests on repeats, one value per fresh worker process (:mod:`edgebench.measure.repeats`: Welch's t on the
logarithm of the repeats' median step times), never on the steps of one process: those are autocorrelated and share
their process's offset, so a test over them called almost any two processes of one configuration different.  Two
single trials get their ratios and the plain statement that one process per side cannot separate a difference from
run-to-run variance, with no p-value.  A trial whose hygiene check failed (:func:`~edgebench.measure.trust.
disturbances`) is left out of a decision with a note, or the decision is ``inconclusive: k of n trials disturbed``.
Each side's warnings and every setting in which A and B differ are printed with the comparison.

Groups (sweeps, devices) are matched configuration by configuration: trials with the same model, batch size,
threads, core mask, frequency and precision are compared (devices: model, batch size, threads and precision, since
core numbers mean different cores on different devices); the trials of one configuration on a side are its repeats.
Two sweeps of one configuration each (two ``run --repeats``) are compared with each other whatever they differ in.
The summary is the geometric mean of the ratios over the matched configurations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from edgebench.errors import UsageError
from edgebench.host.cpuset import format_cpu_list, format_mask
from edgebench.markup import rich_text
from edgebench.measure.repeats import ALPHA, TEST, Difference, by_configuration, compare_results, step_median_ms
from edgebench.measure.trust import disturbances
from edgebench.records.result import TrialResult
from edgebench.records.trial import NOT_MEASURED, Trial
from edgebench.report.fit import keep_whole
from edgebench.store import Store
from edgebench.units import MIB

Kind = Literal["trial", "sweep", "device"]
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


def _shown(name: str, value: Any) -> str:
    if name == "cores" and value:
        return f"{format_cpu_list(value)} (mask {format_mask(value)})"
    return "default" if value is None else str(value)


def setting_differences(a: Iterable[Trial], b: Iterable[Trial], *, skip: Iterable[str] = ()) -> list[str]:
    """Every Trial setting in which the trials of A and of B differ (``cores: 0 (mask 1) vs 1 (mask 2)``), each
    side's values listed where a side holds several; ``skip``: fields already shown elsewhere."""
    trials_a, trials_b = list(a), list(b)
    out = []
    for name in Trial.model_fields:
        if name in NOT_MEASURED or name in skip:
            continue
        values_a = sorted({_shown(name, getattr(t, name)) for t in trials_a})
        values_b = sorted({_shown(name, getattr(t, name)) for t in trials_b})
        if values_a != values_b:
            out.append(f"{name}: {', '.join(values_a)} vs {', '.join(values_b)}")
    return out


@dataclass(frozen=True)
class Side:
    ref: str
    kind: Kind
    results: list[TrialResult]

    @property
    def title(self) -> str:
        return f"{self.kind} {self.ref}"

    @property
    def configurations(self) -> int:
        return len(by_configuration(self.results))


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


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a == 0 or math.isnan(a) or math.isnan(b):
        return None
    return b / a


def short(d: Difference | None) -> str:
    """A decision in a table cell: ``1.16x slower (p=1.4e-07)``, ``no clear difference (p=0.74)``, ``one process
    each``, ``inconclusive: 2 of 10 trials disturbed``; the long form goes under the table."""
    if d is None or d.ratio is None:
        return "-"
    if d.answer.startswith("inconclusive"):
        return d.answer.split(" (", 1)[0]
    if d.p_value is None:
        return "one process each" if "one process" in d.answer else d.answer
    if d.direction is None:
        return f"no clear difference (p={d.p_value:.2g})"
    return f"{d.ratio if d.ratio >= 1 else 1 / d.ratio:.2f}x {d.direction} (p={d.p_value:.2g})"


@dataclass(frozen=True)
class Measure:
    name: str
    get: Callable[[TrialResult], float | None]
    fmt: str = "{:.2f}"
    lower_is_better: bool = True
    #: The step measure a decision is taken on (one per comparison).
    decides: bool = False


MEASURES = (
    Measure("step median (ms)", step_median_ms, decides=True),
    Measure("step mean (ms)", lambda r: r.latency.step_ms.mean if r.latency.step_ms else None),
    Measure("step p95 (ms)", lambda r: r.latency.step_ms.p95 if r.latency.step_ms else None),
    Measure("throughput (samples/s)", lambda r: r.latency.throughput_sps, "{:.1f}", lower_is_better=False),
    Measure("inference mean (ms)", lambda r: r.latency.infer_ms.mean if r.latency.infer_ms else None),
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
    """One measurement (trial comparison) or one configuration (group comparison): both sides as shown, the ratio
    B/A and, on the row a decision is taken on, the decision."""

    label: str
    a: str
    b: str
    ratio: float | None
    decision: Difference | None = None
    lower_is_better: bool = True
    extra: dict[str, float | None] = field(default_factory=dict)


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def compare_trials(a: TrialResult, b: TrialResult) -> list[Row]:
    """Two trials measurement by measurement; the step median's row carries the decision, which for one process
    per side is that none can be taken (or ``inconclusive`` where a side is disturbed)."""
    rows = []
    for m in MEASURES:
        va, vb = m.get(a), m.get(b)
        if va is None and vb is None:
            continue
        decision = compare_results([a], [b], m.get, lower_is_better=m.lower_is_better) if m.decides else None
        shown_a = m.fmt.format(va) if va is not None else "-"
        shown_b = m.fmt.format(vb) if vb is not None else "-"
        rows.append(Row(m.name, shown_a, shown_b, ratio(va, vb), decision, m.lower_is_better))
    return rows


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
    #: Settings in which the paired configurations of A and B differ beyond the fields they are paired on.
    differences: list[str] = field(default_factory=list)
    #: The decisions' notes: trials left out as disturbed, per configuration.
    notes: list[str] = field(default_factory=list)


def _figure(results: list[TrialResult]) -> str:
    """A side of one configuration: the mean of its repeats' medians, with how many repeats it rests on."""
    ok = [v for r in results if r.ok and (v := step_median_ms(r)) is not None]
    if not ok:
        return "-"
    return f"{sum(ok) / len(ok):.3g} ({len(ok)})"


def compare_groups(a: Side, b: Side, fields: tuple[str, ...]) -> GroupComparison:
    """Two groups configuration by configuration (a configuration's trials on a side are its repeats); two sides
    of one configuration each are compared with each other whatever ``fields`` say."""

    def grouped(side: Side) -> dict[tuple[Any, ...], list[TrialResult]]:
        out: dict[tuple[Any, ...], list[TrialResult]] = {}
        for r in side.results:
            out.setdefault(match_key(r, fields), []).append(r)
        return out

    ga, gb = grouped(a), grouped(b)
    if a.configurations == 1 and b.configurations == 1 and list(ga) != list(gb):  # configuration vs configuration
        (ka, ra), (kb, rb) = next(iter(ga.items())), next(iter(gb.items()))
        same = [(f, x) for f, x, y in zip(fields, ka, kb, strict=True) if x == y]
        shared = key_label(tuple(x for _, x in same), tuple(f for f, _ in same))
        pairs = [(f"{shared} (A vs B)".strip(), ra, rb)]
        only_a = only_b = 0
    else:
        shared = [k for k in ga if k in gb]
        pairs = [(key_label(k, fields), ga[k], gb[k]) for k in shared]
        only_a, only_b = len(ga) - len(shared), len(gb) - len(shared)
    rows, ratios, notes = [], [], []
    for label, ra, rb in pairs:
        decision = compare_results(ra, rb)
        if decision.ratio is not None:
            ratios.append(decision.ratio)
        notes += [f"{label}: {n}" for n in decision.notes]
        if decision.answer.startswith("inconclusive"):
            notes.append(f"{label}: {decision.answer}")
        extra = {}
        for name, getter in (
            ("throughput", lambda r: r.latency.throughput_sps),
            ("peak memory", lambda r: r.memory.peak_bytes),
            ("energy", lambda r: r.energy.energy_j),
        ):
            extra[name] = ratio(_mean([getter(r) for r in ra]), _mean([getter(r) for r in rb]))
        rows.append(Row(label, _figure(ra), _figure(rb), decision.ratio, decision, extra=extra))
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    differences = setting_differences([r.trial for _, ra, _ in pairs for r in ra],
                                      [r.trial for _, _, rb in pairs for r in rb])  # fmt: skip
    return GroupComparison(rows, only_a, only_b, geo, fields, differences, notes)


def warnings_of(side: Side) -> list[str]:
    """Each of a side's trials that is disturbed or carries a hygiene warning, in one line each."""
    lines = []
    for r in side.results:
        why = disturbances(r)
        if why:
            lines.append(f"trial {r.trial_id}: disturbed: {'; '.join(why)}")
        elif r.hygiene is not None and r.hygiene.warning:
            lines.append(f"trial {r.trial_id}: {r.hygiene.warning}")
    return lines


def decision_json(d: Difference | None) -> dict[str, object]:
    if d is None:
        return {}
    return {"ratio_low": d.low, "ratio_high": d.high, "p_value": d.p_value, "test": d.test,
            "significant": d.significant, "repeats_a": d.n_a, "repeats_b": d.n_b, "decision": d.answer,
            "notes": d.notes}  # fmt: skip


def row_json(r: Row) -> dict[str, object]:
    """One row of ``compare --json``: its label, both sides, the ratio and, where one is taken, the decision (its
    test and p-value; none for one process per side)."""
    return {
        "label": r.label,
        "a": r.a,
        "b": r.b,
        "ratio": r.ratio,
        **decision_json(r.decision),
        **({"ratios": r.extra} if r.extra else {}),
    }


def _print_context(a: Side, b: Side, differences: list[str], notes: list[str]) -> None:
    """Under a comparison: the settings in which A and B differ, each side's warnings, the decisions' notes."""
    if differences:
        print("A and B differ in: " + "; ".join(differences))
    for name, side in (("A", a), ("B", b)):
        for line in warnings_of(side):
            print(f"warning: {name}: {line}")
    for note in notes:
        print(f"note: {note}")


def print_trial_comparison(a: Side, b: Side, rows: list[Row], warning: str | None) -> None:
    """Two trials: each measurement of B next to A's and the ratio; then what one process per side can decide, the
    settings they differ in, each side's warnings and the unlike pair's warning."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=rich_text(f"A = {a.title}   B = {b.title}"), title_justify="left")
    for column in ("measurement", "A", "B", "B/A"):
        table.add_column(column, justify="left" if column == "measurement" else "right")
    for r in rows:
        table.add_row(*map(rich_text, (r.label, r.a, r.b, f"{r.ratio:.3f}" if r.ratio is not None else "-")))
    Console().print(table)
    decision = next((r.decision for r in rows if r.decision is not None), None)
    if decision is not None:
        print(f"step time: {decision.answer}")
    _print_context(a, b, setting_differences([a.results[0].trial], [b.results[0].trial]),
                   decision.notes if decision else [])  # fmt: skip
    for name, side in (("A", a), ("B", b)):
        r = side.results[0]
        if r.repeat is not None and r.sweep is not None:
            print(f"note: {name} is repeat {r.repeat.index + 1} of {r.repeat.planned} of its configuration in sweep "
                  f"{r.sweep.sweep_id}: compare the sweeps to decide from every repeat")  # fmt: skip
    if warning:
        print(f"warning: {warning}")


def print_group_comparison(a: Side, b: Side, result: GroupComparison) -> None:
    """Two groups: each paired configuration's median step time over its repeats, the ratio and the decision,
    their geometric mean, what is unpaired, then the differing settings, warnings and notes."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    title = rich_text(f"A = {a.title}   B = {b.title}\nmedian step time, ms: the mean over the (n) repeats")
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    measured = [name for name in ("throughput", "peak memory", "energy")
                if any(r.extra.get(name) is not None for r in result.rows)]  # fmt: skip
    titles = {"throughput": "samples/s B/A", "peak memory": "memory B/A", "energy": "energy B/A"}
    for column in ("configuration", "A", "B", "B/A", "decision", *(titles[m] for m in measured)):
        table.add_column(column, justify="left" if column in ("configuration", "decision") else "right")
    for r in result.rows:
        extra = [f"{r.extra[m]:.3f}" if r.extra.get(m) is not None else "-" for m in measured]
        d = r.decision
        shown = f"{r.ratio:.3f}" if r.ratio is not None else "-"
        if d is not None and d.low is not None and d.high is not None:
            shown += f" [{d.low:.3f}, {d.high:.3f}]"
        table.add_row(*map(rich_text, (r.label, r.a, r.b, shown, short(d), *extra)))
    console.print(keep_whole(table, "A", "B"))
    console.print(f"decision: {TEST}, alpha {ALPHA:g}; one repeat on a side decides nothing", soft_wrap=True)
    if result.geometric_mean is not None:
        console.print(f"geometric mean of step-time ratios B/A over {len(result.rows)} configurations: "
                      f"{result.geometric_mean:.3f}")  # fmt: skip
    if result.only_a or result.only_b:
        console.print(rich_text(f"not compared: {result.only_a} configurations only in A, {result.only_b} only in B "
                                f"(paired on {', '.join(result.fields)})"))  # fmt: skip
    _print_context(a, b, result.differences, result.notes)
