"""Each observation's figure drawn again from the user's trials, as views the HTML report draws.

A view is built by the report's own figure code where one exists (the sweep curves, memory by category, a trial's
utilization and power over its steps); the study adds curves of the figures a check reads that the report does
not draw (whole-system energy per step, per-core utilization against batch size).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from edgebench.records.result import TrialResult
from edgebench.report import figures as f
from edgebench.study.common import by_model, gross_energy_per_step_j

ViewMaker = Callable[[Sequence[TrialResult], Any], f.View]


def curve(
    key: str, title: str, y_label: str, value: Callable[[TrialResult], float | None], note: str = ""
) -> ViewMaker:
    """``value`` against batch size, one curve per model, log-log (the fits are in log-log)."""

    def make(results: Sequence[TrialResult], store: Any) -> f.View:
        traces = []
        for model, rs in sorted(by_model([r for r in results if r.ok]).items()):
            pts = sorted((r.trial.batch_size, value(r)) for r in rs if value(r) is not None)
            if pts:
                traces.append(f.Trace(model, [float(p[0]) for p in pts], [float(p[1]) for p in pts],  # type: ignore[arg-type]
                                      kind="line" if len(pts) > 1 else "markers"))  # fmt: skip
        if not traces:
            return f.Missing(key, title, f"no successful trial has {y_label}")
        return f.Figure(key, title, "batch size", y_label, tuple(traces), notes=(note,) if note else (), x_log=True)

    return make


def sweep(y: str) -> ViewMaker:
    return lambda results, store: f.sweep_curve(results, y, key=f"study-{y}")


def sweep_x(y: str, x: str) -> ViewMaker:
    return lambda results, store: f.sweep_curve(results, y, x, key=f"study-{y}-{x}")


def per_core(results: Sequence[TrialResult], store: Any) -> f.View:
    key, title = "study-per-core", "Per-core utilization against batch size (measured, /proc/stat)"
    groups: dict[str, list[tuple[float, float]]] = {}
    for r in results:
        if not r.ok or not r.cpu.util_pct:
            continue
        for i, v in enumerate(r.cpu.util_pct.per_core):
            if v is not None:
                groups.setdefault(f"{r.trial.model} cpu{i}", []).append((float(r.trial.batch_size), v))
    if not groups:
        return f.Missing(key, title, "no trial measured per-core utilization")
    traces = tuple(f.Trace(k, [p[0] for p in sorted(v)], [p[1] for p in sorted(v)]) for k, v in groups.items())
    return f.Figure(key, title, "batch size", "utilization (%)", traces, x_log=True)


def memory_categories(results: Sequence[TrialResult], store: Any) -> f.View:
    return f.memory_categories([r for r in results if r.ok and r.memory.by_category is not None])


def trial_view(name: str, pick: Callable[[TrialResult], bool] = lambda r: True) -> ViewMaker:
    """A view of one trial (the largest batch of the first model that ``pick`` accepts): its series over steps."""

    def make(results: Sequence[TrialResult], store: Any) -> f.View:
        from edgebench.report.content import load_stored

        chosen = [r for r in results if r.ok and pick(r)]
        if not chosen or store is None:
            return f.Missing(f"study-{name}", name.replace("_", " "), "no stored trial to draw")
        r = max(chosen, key=lambda r: (r.trial.model == chosen[0].trial.model, r.trial.batch_size))
        stored = load_stored(store, r)
        if name == "utilization":
            return f.utilization(stored, first_steps=3)
        return getattr(f, name)(stored)  # type: ignore[no-any-return]

    return make


gross_energy = curve(
    "study-gross-energy", "Whole-system energy per step against batch size (measured, gross)", "energy per step (J)",
    gross_energy_per_step_j, "gross: the power sensor's readings times their interval, idle not subtracted (the "
    "paper's E)",
)  # fmt: skip


def with_published(make: ViewMaker, name: str, points: tuple[tuple[float, float], ...]) -> ViewMaker:
    """``make``'s figure with the paper's own values beside the user's, as markers named after their source."""

    def made(results: Sequence[TrialResult], store: Any) -> f.View:
        view = make(results, store)
        if not isinstance(view, f.Figure):
            return view
        trace = f.Trace(f"published: {name}", [p[0] for p in points], [p[1] for p in points], kind="markers")
        note = f"published: {name}, read from the paper's text (another device and model: the shape is compared)"
        return replace(view, traces=(*view.traces, trace), notes=(*view.notes, note))

    return made
