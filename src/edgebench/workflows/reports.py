"""Reports from the store: one self-contained HTML file (trials, sweeps, layers, an ``edgebench monitor`` recording;
it opens offline), and one figure for a paper (PNG, PDF or SVG) from the views of :mod:`edgebench.report.figures`.
The plotting libraries (the extra ``edgebench[report]``) are imported only when a figure is drawn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgebench.errors import UsageError

#: The figures ``plot`` draws.
PLOT_KINDS = ("step-times", "utilization", "gpu-utilization", "memory", "power", "power-rails", "clocks", "layers",
              "layer-counters", "memory-categories", "sweep", "freq-temp", "lm-loss", "lm-context",
              "lm-kv-cache")  # fmt: skip
INSTALL = "pip install 'edgebench[report]'"


@dataclass(frozen=True)
class ReportRequest:
    """The trials to report (ids or prefixes, a sweep's, the last N), a monitor folder, the page's title, the file."""

    trials: Sequence[str] = ()
    out: Path = Path("report.html")
    sweep: str | None = None
    last: int | None = None
    monitor: Path | None = None
    title: str = "edgebench report"
    store: Path | None = None


@dataclass(frozen=True)
class ReportWritten:
    """The HTML file written: its size, the trials in it, and the views that had nothing measured to show."""

    path: Path
    #: The page's length in characters (the HTML is ASCII but for the names it quotes).
    page_chars: int
    trials: int
    not_measured: int


@dataclass(frozen=True)
class PlotRequest:
    """One figure: its kind, the trial (per-trial kinds), a sweep and its axes (``sweep``), the first steps
    (``utilization``), a monitor folder (``freq-temp``), and the file (its suffix picks the format)."""

    kind: str
    trial: str | None = None
    out: Path = Path("fig.png")
    sweep: str | None = None
    y: str = "step_time_ms"
    x: str = "batch_size"
    steps: int | None = None
    monitor: Path | None = None
    store: Path | None = None


def need(module: str, what: str) -> None:
    """Fail in one line, before any work, where the optional extra is missing."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise UsageError(what, f"needs {module}, which is not installed: {INSTALL}") from None


def write_report(request: ReportRequest) -> ReportWritten:
    """Build the report's content from the store (and the monitor folder) and write the page whole."""
    from edgebench import __version__
    from edgebench.host.files import write_text_replacing
    from edgebench.report.content import build_content, select
    from edgebench.report.html import render_html
    from edgebench.report.outputs import check_output_file
    from edgebench.workflows.common import read_store

    need("plotly", "report")
    r = request
    if r.last is not None and r.last < 1:
        raise UsageError("--last", "must be at least 1")
    if r.out.suffix.lower() not in (".html", ".htm"):
        raise UsageError("-o", f"{r.out} is not an .html file; give e.g. -o report.html")
    check_output_file("-o", r.out, "report.html")
    if r.monitor is not None and not r.monitor.is_dir():
        raise UsageError("--monitor", f"{r.monitor} is not a folder; give the folder `edgebench monitor --out` wrote")
    only_monitor = r.monitor is not None and not r.trials and r.sweep is None and r.last is None
    with read_store(r.store) if not only_monitor or r.store is not None else _NoStore() as db:
        results = [] if only_monitor else select(db, list(r.trials), r.sweep, r.last)
        content = build_content(db, results, r.monitor, r.title)
    page = render_html(content, f"edgebench {__version__}")
    write_text_replacing(r.out, page)
    return ReportWritten(r.out, len(page), len(results), len(content.missing()))


class _NoStore:
    """The store stand-in of a report of a monitor recording alone (no trial is read)."""

    path = Path("-")

    def __enter__(self) -> _NoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def write_plot(request: PlotRequest) -> Path:
    """Draw the figure and write it whole; a view the trials did not measure is a one-line error saying why."""
    from edgebench.host.files import write_with
    from edgebench.report import figures as f
    from edgebench.report.outputs import check_output_file
    from edgebench.report.plot import FORMATS

    r = request
    if r.kind not in PLOT_KINDS:
        raise UsageError("KIND", f"{r.kind!r} is not a plot; choose from {', '.join(PLOT_KINDS)}")
    if r.out.suffix.lower() not in FORMATS:
        raise UsageError("-o", f"{r.out} must end in .png, .pdf or .svg")
    if r.y not in f.Y_FIELDS:
        raise UsageError("--y", f"{r.y!r} is not plottable; choose from {', '.join(f.Y_FIELDS)}")
    if r.x not in f.X_FIELDS:
        raise UsageError("--x", f"{r.x!r} is not a sweep axis; choose from {', '.join(f.X_FIELDS)}")
    if r.steps is not None and r.steps < 1:
        raise UsageError("--steps", "must be at least 1")
    need("matplotlib", "plot")
    check_output_file("-o", r.out, "fig.png")
    view = f.drawable(_view(r))
    if isinstance(view, f.Missing):
        raise UsageError(r.kind, f"{view.title}: not measured: {view.reason}")
    from edgebench.report.plot import save_figure

    write_with(r.out, lambda tmp: save_figure(view, tmp, r.out.suffix.lower()[1:]))
    return r.out


def _view(r: PlotRequest) -> Any:
    from edgebench.report import figures as f
    from edgebench.report.content import load_stored, read_monitor, select
    from edgebench.workflows.common import read_store

    if r.kind == "freq-temp":
        if r.monitor is None:
            raise UsageError("--monitor", "freq-temp draws a monitor recording: give --monitor FOLDER "
                                          "(a trial's clocks are `edgebench plot clocks TRIAL`)")  # fmt: skip
        return f.monitor_freq_temp(read_monitor(r.monitor), str(r.monitor))
    with read_store(r.store) as db:
        if r.kind == "sweep":
            return f.sweep_curve(select(db, [r.trial] if r.trial else [], r.sweep, None), r.y, r.x)
        if r.kind == "memory-categories":  # the paper's Figure 9: the named trials, a sweep's, or every one
            return f.memory_categories(select(db, [r.trial] if r.trial else [], r.sweep, None))
        if r.trial is None:
            raise UsageError("TRIAL", f"`plot {r.kind}` draws one trial: give its id (`edgebench trials` lists them)")
        stored = load_stored(db, select(db, [r.trial], None, None)[0])
    from edgebench.report import lm_figures as lm

    draw = {"step-times": f.step_times, "memory": f.memory, "power": f.power, "clocks": f.clocks, "layers": f.layers,
            "gpu-utilization": f.gpu_utilization, "power-rails": f.power_rails, "lm-loss": lm.loss_curve,
            "lm-context": lm.generation_by_context, "lm-kv-cache": lm.kv_cache_by_context}  # fmt: skip
    if r.kind == "layer-counters":
        counted = f.layer_counters(stored)
        why = "the trial counted no perf events per layer: run it with --trace layers --counters"
        return counted or f.Missing("layer-counters", "Per-layer perf counters", why)
    if r.kind == "utilization":
        return f.utilization(stored, first_steps=r.steps)
    return draw[r.kind](stored)
