"""``edgebench report`` (one self-contained HTML file) and ``edgebench plot KIND`` (one figure for a paper).

Both read stored trials (and an ``edgebench monitor`` folder) and draw the views of :mod:`edgebench.report.figures`;
the plotting libraries (the extra ``edgebench[report]``) are imported only here, when a command draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.browse import open_store
from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError
from edgebench.host.files import write_text_replacing, write_with
from edgebench.report.outputs import check_output_file
from edgebench.units import MIB

PLOT_KINDS = ("step-times", "utilization", "gpu-utilization", "memory", "power", "power-rails", "clocks", "layers",
              "layer-counters", "memory-categories", "sweep", "freq-temp")  # fmt: skip
INSTALL = "pip install 'edgebench[report]'"


def _need(module: str, what: str) -> None:
    """Fail in one line, before any work, where the optional extra is missing."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise UsageError(what, f"needs {module}, which is not installed: {INSTALL}") from None


def report(
    trial: Annotated[list[str] | None, typer.Argument(help="Trial ids (or unique prefixes) to report.")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="The HTML file to write.")] = Path("report.html"),
    sweep: Annotated[str | None, typer.Option(help="Report this sweep's trials.")] = None,
    last: Annotated[int | None, typer.Option(help="Report the last N stored trials.")] = None,
    monitor: Annotated[
        Path | None, typer.Option(help="Also draw an `edgebench monitor` folder's frequency/temperature trace.")
    ] = None,
    title: Annotated[str, typer.Option(help="The report's heading.")] = "edgebench report",
    store: StoreOption = None,
) -> int:
    """Write one self-contained HTML report (opens offline) of trials, sweeps and layers."""
    _need("plotly", "report")
    if last is not None and last < 1:
        raise UsageError("--last", "must be at least 1")
    if out.suffix.lower() not in (".html", ".htm"):
        raise UsageError("-o", f"{out} is not an .html file; give e.g. -o report.html")
    check_output_file("-o", out, "report.html")
    if monitor is not None and not monitor.is_dir():
        raise UsageError("--monitor", f"{monitor} is not a folder; give the folder `edgebench monitor --out` wrote")
    from edgebench import __version__
    from edgebench.report.content import build_content, select
    from edgebench.report.html import render_html

    only_monitor = monitor is not None and not trial and sweep is None and last is None
    with open_store(store) if not only_monitor or store is not None else _NoStore() as db:
        results = [] if only_monitor else select(db, trial or [], sweep, last)
        content = build_content(db, results, monitor, title)
    page = render_html(content, f"edgebench {__version__}")
    write_text_replacing(out, page)
    missing = len(content.missing())
    typer.echo(f"wrote {out} ({len(page) / MIB:.1f} MiB): {len(results)} trials, {missing} views not measured")
    return 0


class _NoStore:
    """The store stand-in of a report of a monitor recording alone (no trial is read)."""

    path = Path("-")

    def __enter__(self) -> _NoStore:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def plot(
    kind: Annotated[str, typer.Argument(help=f"One of: {', '.join(PLOT_KINDS)}.")],
    trial: Annotated[str | None, typer.Argument(help="Trial id (or unique prefix) for a per-trial kind.")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="The figure file: .png, .pdf or .svg.")] = Path("fig.png"),
    sweep: Annotated[
        str | None, typer.Option(help="`sweep`: this sweep's trials [default: every stored trial].")
    ] = None,
    y: Annotated[str, typer.Option(help="`sweep`: the quantity on the y axis.")] = "step_time_ms",
    x: Annotated[str, typer.Option(help="`sweep`: the setting on the x axis.")] = "batch_size",
    steps: Annotated[
        int | None, typer.Option(help="`utilization`: only the first N measured steps (3: the paper's figure).")
    ] = None,
    monitor: Annotated[Path | None, typer.Option(help="`freq-temp`: an `edgebench monitor` folder.")] = None,
    store: StoreOption = None,
) -> int:
    """Write one figure (PNG, PDF or SVG) from stored trials, for papers."""
    from edgebench.report import figures as f
    from edgebench.report.plot import FORMATS

    if kind not in PLOT_KINDS:
        raise UsageError("KIND", f"{kind!r} is not a plot; choose from {', '.join(PLOT_KINDS)}")
    if out.suffix.lower() not in FORMATS:
        raise UsageError("-o", f"{out} must end in .png, .pdf or .svg")
    if y not in f.Y_FIELDS:
        raise UsageError("--y", f"{y!r} is not plottable; choose from {', '.join(f.Y_FIELDS)}")
    if x not in f.X_FIELDS:
        raise UsageError("--x", f"{x!r} is not a sweep axis; choose from {', '.join(f.X_FIELDS)}")
    if steps is not None and steps < 1:
        raise UsageError("--steps", "must be at least 1")
    _need("matplotlib", "plot")
    check_output_file("-o", out, "fig.png")
    view = f.drawable(_view(kind, trial, sweep, y, x, steps, monitor, store))
    if isinstance(view, f.Missing):
        raise UsageError(kind, f"{view.title}: not measured: {view.reason}")
    from edgebench.report.plot import save_figure

    write_with(out, lambda tmp: save_figure(view, tmp, out.suffix.lower()[1:]))
    typer.echo(f"wrote {out}")
    return 0


def _view(kind, trial, sweep, y, x, steps, monitor, store):  # type: ignore[no-untyped-def]
    from edgebench.report import figures as f
    from edgebench.report.content import load_stored, read_monitor, select

    if kind == "freq-temp":
        if monitor is None:
            raise UsageError("--monitor", "freq-temp draws a monitor recording: give --monitor FOLDER "
                                          "(a trial's clocks are `edgebench plot clocks TRIAL`)")  # fmt: skip
        return f.monitor_freq_temp(read_monitor(monitor), str(monitor))
    with open_store(store) as db:
        if kind == "sweep":
            results = select(db, [trial] if trial else [], sweep, None)
            return f.sweep_curve(results, y, x)
        if kind == "memory-categories":  # the paper's Figure 9: the named trials, a sweep's, or every one
            return f.memory_categories(select(db, [trial] if trial else [], sweep, None))
        if trial is None:
            raise UsageError("TRIAL", f"`plot {kind}` draws one trial: give its id (`edgebench trials` lists them)")
        stored = load_stored(db, select(db, [trial], None, None)[0])
    draw = {"step-times": f.step_times, "memory": f.memory, "power": f.power, "clocks": f.clocks, "layers": f.layers,
            "gpu-utilization": f.gpu_utilization, "power-rails": f.power_rails}  # fmt: skip
    if kind == "layer-counters":
        counted = f.layer_counters(stored)
        why = "the trial counted no perf events per layer: run it with --trace layers --counters"
        return counted or f.Missing("layer-counters", "Per-layer perf counters", why)
    if kind == "utilization":
        return f.utilization(stored, first_steps=steps)
    return draw[kind](stored)
