"""``edgebench report`` (one self-contained HTML file) and ``edgebench plot KIND`` (one figure for a paper).

Both read stored trials (and an ``edgebench monitor`` folder) and draw the views of :mod:`edgebench.report.figures`,
through :mod:`edgebench.workflows.reports`; the plotting libraries (the extra ``edgebench[report]``) are imported only
when a command draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import StoreOption
from edgebench.units import MIB
from edgebench.workflows.reports import PLOT_KINDS, PlotRequest, ReportRequest


def report(
    trial: Annotated[list[str] | None, typer.Argument(help="Trial ids (or unique prefixes) to report.")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="The HTML file to write.")] = ReportRequest.out,
    sweep: Annotated[str | None, typer.Option(help="Report this sweep's trials.")] = None,
    last: Annotated[int | None, typer.Option(help="Report the last N stored trials.")] = None,
    monitor: Annotated[
        Path | None, typer.Option(help="Also draw an `edgebench monitor` folder's frequency/temperature trace.")
    ] = None,
    title: Annotated[str, typer.Option(help="The report's heading.")] = ReportRequest.title,
    store: StoreOption = None,
) -> int:
    """Write one self-contained HTML report (opens offline) of trials, sweeps and layers."""
    from edgebench.workflows.reports import write_report

    done = write_report(ReportRequest(trial or [], out, sweep, last, monitor, title, store))
    typer.echo(
        f"wrote {out} ({done.page_chars / MIB:.1f} MiB): {done.trials} trials, {done.not_measured} views not measured"
    )
    return 0


def plot(
    kind: Annotated[str, typer.Argument(help=f"One of: {', '.join(PLOT_KINDS)}.")],
    trial: Annotated[str | None, typer.Argument(help="Trial id (or unique prefix) for a per-trial kind.")] = None,
    out: Annotated[Path, typer.Option("-o", "--out", help="The figure file: .png, .pdf or .svg.")] = PlotRequest.out,
    sweep: Annotated[
        str | None, typer.Option(help="`sweep`: this sweep's trials [default: every stored trial].")
    ] = None,
    y: Annotated[str, typer.Option(help="`sweep`: the quantity on the y axis.")] = PlotRequest.y,
    x: Annotated[str, typer.Option(help="`sweep`: the setting on the x axis.")] = PlotRequest.x,
    steps: Annotated[
        int | None, typer.Option(help="`utilization`: only the first N measured steps (3: the paper's figure).")
    ] = None,
    monitor: Annotated[Path | None, typer.Option(help="`freq-temp`: an `edgebench monitor` folder.")] = None,
    store: StoreOption = None,
) -> int:
    """Write one figure (PNG, PDF or SVG) from stored trials, for papers."""
    from edgebench.workflows.reports import write_plot

    typer.echo(f"wrote {write_plot(PlotRequest(kind, trial, out, sweep, y, x, steps, monitor, store))}")
    return 0
