"""What a report covers, read from the store once: the trials, their series, the views and tables built from them.

No plotting library here: :mod:`edgebench.report.html` draws this content with Plotly.  The sections follow the
issue's order: the summary table, the published figures as named views, the sweeps' curves, one section per trial,
and every view that could not be drawn with its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from edgebench.errors import UsageError, shortened
from edgebench.host.cpuset import format_mask
from edgebench.parsing import json_text
from edgebench.records.result import TrialResult
from edgebench.records.sampling import SamplerMeta
from edgebench.report import figures as f
from edgebench.sensors.samples import Samples, read_samples
from edgebench.store.trials import StoredTrial, finished_of
from edgebench.units import MIB

#: Trials drawn one by one; beyond this a report of many trials shows their table and curves only (opens quickly).
DETAIL_LIMIT = 12


@dataclass(frozen=True)
class Table:
    """A plain table of numbers (the MNN suite's and DNNTune's): a title, column names, rows, and a note."""

    key: str
    title: str
    columns: list[str]
    rows: list[list[str | float | None]]
    note: str = ""


@dataclass
class Section:
    title: str
    views: list[f.View | Table] = field(default_factory=list)
    text: str = ""


@dataclass
class ReportContent:
    title: str
    results: list[TrialResult]
    sections: list[Section]
    notes: list[str]

    def missing(self) -> list[f.Missing]:
        return [v for s in self.sections for v in s.views if isinstance(v, f.Missing)]


def load_stored(store, result: TrialResult) -> StoredTrial:  # type: ignore[no-untyped-def]
    """One trial's series from an open store (``store.trials.load_trial`` opens the store per trial)."""
    return StoredTrial.of(finished_of(store, result))


def read_monitor(folder: Path) -> Samples:
    """An ``edgebench monitor`` folder's samples with the sampler's description of them."""
    csv, meta_path = folder / "samples.csv", folder / "meta.json"
    if not csv.is_file():
        raise UsageError("--monitor", f"{folder} holds no samples.csv; give a folder `edgebench monitor --out` wrote")
    meta = None
    try:
        if meta_path.is_file():
            raw = json_text(meta_path.read_bytes())
            if not isinstance(raw, dict):
                raise ValueError("meta.json is not a JSON object")
            meta = SamplerMeta(**{k: v for k, v in raw.items() if k in SamplerMeta.__dataclass_fields__})
            if not isinstance(meta.columns, list) or not all(isinstance(c, str) for c in meta.columns):
                raise ValueError("meta.json's columns are not a list of names")
        return read_samples(csv, meta)
    except (OSError, ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        raise UsageError(
            "--monitor",
            f"{folder} cannot be read ({type(exc).__name__}: {shortened(str(exc), 100)}); give a "
            "folder `edgebench monitor --out` wrote",
        ) from None


def select(store, trial_ids: Sequence[str], sweep_id: str | None, last: int | None) -> list[TrialResult]:  # type: ignore[no-untyped-def]
    """The trials a report or plot covers: named ones, a sweep's, the last N, or all."""
    chosen: dict[str, TrialResult] = {}
    for ref in trial_ids:
        try:
            r = store.get(ref)
        except KeyError as exc:
            raise UsageError("TRIAL", f"{exc.args[0]} in {store.path}; `edgebench trials` lists them") from None
        chosen[r.trial_id] = r
    if sweep_id is not None:
        if not store.sweep_exists(sweep_id):
            known = ", ".join(store.sweep_ids()) or "none yet"
            raise UsageError("--sweep", f"no sweep {sweep_id!r} in {store.path} (sweeps: {known})")
        chosen.update((r.trial_id, r) for r in store.query(sweep_id=sweep_id))
    if last is not None or (not trial_ids and sweep_id is None):
        everything = store.query()
        chosen.update((r.trial_id, r) for r in (everything[-last:] if last else everything))
    return list(chosen.values())


def _mib(n: int | None) -> float | None:
    return n / MIB if n is not None else None


#: What a table's row is keyed by beside the model and batch size, where the trials differ in it: every setting a
#: sweep varies, so two trials that differ only in their cores are two rows, never one kept silently.
_SETTINGS: dict[str, Callable[[TrialResult], str]] = {
    "threads": lambda r: f"t{r.trial.threads or '-'}",
    "cores": lambda r: f"mask {(r.trial.cores_mask or format_mask(r.trial.cores)) if r.trial.cores else 'all'}",
    "freq": lambda r: f"{r.applied_freq_khz / 1e3:g}MHz" if r.applied_freq_khz else "freq not pinned",
    "backend": lambda r: r.trial.backend,
    "precision": lambda r: r.trial.precision,
    "mode": lambda r: r.trial.mode,
}


def _varying(results: Sequence[TrialResult], names: Sequence[str]) -> list[str]:
    return [n for n in names if len({_SETTINGS[n](r) for r in results}) > 1]


def _latest(results: Sequence[TrialResult], key: Callable[[TrialResult], tuple[object, ...]]) -> tuple[
    dict[tuple[object, ...], TrialResult], str
]:  # fmt: skip
    """The latest ok trial of each key, and a note naming the trials a key had more of (never kept silently)."""
    latest: dict[tuple[object, ...], TrialResult] = {}
    passed: list[str] = []
    for r in results:
        if r.ok and r.latency.step_ms is not None:
            k = key(r)
            if k in latest:
                passed.append(latest[k].trial_id)
            latest[k] = r
    note = ""
    if passed:
        note = (f"{len(passed)} trial(s) of a configuration measured again are not in the table, the latest of each "
                f"is: {', '.join(passed[:6])}{' ...' if len(passed) > 6 else ''}")  # fmt: skip
    return latest, note


def _mnn_tables(results: Sequence[TrialResult]) -> list[Table]:
    """The MNN-based suite's RES, CPU usage and time tables: per model (and every other setting the trials differ
    in), one column per batch size; the latest ok trial of each, the others named in the note."""
    ok = [r for r in results if r.ok and r.latency.step_ms is not None]
    varying = _varying(ok, list(_SETTINGS))

    def row_of(r: TrialResult) -> str:
        return " ".join([r.trial.model, *(_SETTINGS[n](r) for n in varying)])

    latest, note = _latest(ok, lambda r: (row_of(r), r.trial.batch_size))
    models = sorted({m for m, _ in latest})
    batches = sorted({b for _, b in latest})
    tables = []
    for key, title, value in (
        ("mnn-res", "RES (peak resident memory, MiB)", lambda r: _mib(r.memory.peak_bytes)),
        ("mnn-cpu", "CPU usage (worker, % of one core)", lambda r: r.cpu.process_pct),
        ("mnn-time", "Time per training step (ms)", lambda r: r.latency.step_ms.mean),
    ):  # fmt: skip
        rows = [[m, *(value(latest[(m, b)]) if (m, b) in latest else None for b in batches)] for m in models]
        tables.append(Table(key, title, ["model", *(f"batch {b}" for b in batches)], rows, note))
    return tables


def _framework_table(results: Sequence[TrialResult]) -> Table:
    """DNNTune's framework table: per model and batch (and every other setting the trials differ in), the step time
    of each backend x precision; the latest ok trial of each, the others named in the note."""
    ok = [r for r in results if r.ok and r.latency.step_ms is not None]
    varying = _varying(ok, ["threads", "cores", "freq"])

    def row_of(r: TrialResult) -> str:
        return " ".join([r.trial.model, *(_SETTINGS[n](r) for n in varying)])

    latest, kept = _latest(ok, lambda r: (row_of(r), r.trial.batch_size,
                                          f"{r.trial.backend} {r.trial.precision} {r.trial.mode}"))  # fmt: skip
    combos = sorted({c for _, _, c in latest})
    keys = sorted({(m, b) for m, b, _ in latest})
    rows = [[m, b, *(latest[(m, b, c)].latency.step_ms.mean if (m, b, c) in latest else None for c in combos)]
            for m, b in keys]  # fmt: skip
    note = "" if len(combos) > 1 else "one backend and precision among these trials; run others to compare"
    note = "; ".join(n for n in (note, kept) if n)
    return Table("dnntune-frameworks", "Step time (ms) by backend x precision", ["model", "batch", *combos], rows, note)


def _memory_table(results: Sequence[TrialResult]) -> Table:
    """The paper's Figure 9: memory by category per model and batch size (MiB), as the workers measured it."""
    from edgebench.report.memory import COLUMNS, NOTE, category_rows

    rows = category_rows(results)
    note = NOTE if rows else "no trial here measured memory by category (torch and MNN trials of this version do)"
    return Table("paper-memory-categories", "Characterization paper: memory by category (MiB) against batch size",
                 ["model", "backend", "mode", "batch", *COLUMNS], rows, note)  # fmt: skip


def build_content(store, results: list[TrialResult], monitor: Path | None, title: str) -> ReportContent:  # type: ignore[no-untyped-def]
    """Every section of the report for ``results`` (and a monitor recording), as data."""
    if not results and monitor is None:
        raise UsageError(
            "TRIAL", f"no trials to report in {store.path}; run `edgebench run` or `edgebench sweep` first"
        )
    notes: list[str] = []
    detail = results[:DETAIL_LIMIT]
    if len(results) > DETAIL_LIMIT:
        notes.append(f"per-trial charts for the first {DETAIL_LIMIT} of {len(results)} trials; the table and curves "
                     "cover all of them (name trials, `edgebench report ID...`, to draw others)")  # fmt: skip
    from edgebench.report.warnings import hygiene_warnings

    notes += hygiene_warnings(results)
    stored = [load_stored(store, r) for r in detail]
    monitor_samples = read_monitor(monitor) if monitor is not None else None

    named = Section("Named views: the published figures")
    traced = next((s for s in stored if s.spans is not None), None)
    first = traced or next((s for s in stored if s.result.ok), stored[0] if stored else None)
    paper = "Characterization paper: "
    if first is not None:
        named.views.append(
            _retitle(f.utilization(first, first_steps=3), paper + "utilization over three training steps")
        )
    # Figures 4-6 and 8 of the paper: utilization (mean, per core, GPU), energy (device, per rail), throughput
    for y, name in (("cpu_util_pct", "CPU utilization"), ("core_util_pct", "each core's utilization"),
                    ("gpu_util_pct", "GPU utilization"), ("energy_per_step_j", "energy per step"),
                    ("rail_energy_per_step_j", "energy per step by component"), ("peak_memory_bytes", "memory"),
                    ("throughput_sps", "throughput")):  # fmt: skip
        view = f.sweep_curve(results, y, "batch_size", key=f"paper-{y}")
        named.views.append(_retitle(view, f"{paper}{name} against batch size"))
    named.views.append(f.memory_categories(results))
    named.views.append(_memory_table(results))
    mnn = "MNN-based suite: "
    named.views += [Table(t.key, mnn + t.title, t.columns, t.rows, t.note) for t in _mnn_tables(results)]
    if monitor_samples is not None:
        trace = f.monitor_freq_temp(monitor_samples, str(monitor))
    elif first is not None:
        trace = f.clocks(first)
    else:
        trace = f.Missing("mnn-freq-temp", "", "no trial or monitor recording given")
    named.views.append(_retitle(trace, mnn + "frequency/temperature trace", key="mnn-freq-temp"))
    fw = _framework_table(results)
    named.views.append(Table(fw.key, "DNNTune: " + fw.title, fw.columns, fw.rows, fw.note))
    named.views.append(f.Missing("dnntune-partition", "DNNTune: partition bars",
                                 "a partition analysis is not a stored trial: `edgebench partition MODEL --plot FILE` "
                                 "draws its bars"))  # fmt: skip

    sections = [named]
    sweep_ids = list(dict.fromkeys(r.sweep.sweep_id for r in results if r.sweep is not None))
    for sweep_id in sweep_ids:
        members = [r for r in results if r.sweep is not None and r.sweep.sweep_id == sweep_id]
        views = [_rekey(v, f"{sweep_id}-{v.key}") for v in f.sweep_views(members)]
        sections.append(Section(f"Sweep {sweep_id} ({len(members)} trials)", views))
    for s in stored:
        r = s.result
        text = f"{r.status}: {r.reason}" if not r.ok else ""
        sections.append(Section(f"Trial {r.trial_id}: {r.trial.model} batch {r.trial.batch_size} on {r.target}",
                                f.trial_views(s), text))  # fmt: skip
    if monitor_samples is not None and first is not None:
        sections.append(Section(f"Monitor recording {monitor}", [f.monitor_freq_temp(monitor_samples, str(monitor))]))
    return ReportContent(title, results, sections, notes)


def _retitle(view: f.View, title: str, key: str | None = None) -> f.View:
    key = key or view.key
    if isinstance(view, f.Missing):
        return f.Missing(key, title, view.reason)
    return replace(view, title=title, key=key)


def _rekey(view: f.View, key: str) -> f.View:
    if isinstance(view, f.Missing):
        return f.Missing(key, view.title, view.reason)
    return replace(view, key=key)
