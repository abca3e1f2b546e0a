"""``edgebench peak``: measure (once) and show this device's GEMM and copy ceilings for a placement."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from edgebench.cli.options import StoreOption, say
from edgebench.units import MIB


def peak(
    cores: Annotated[
        str | None, typer.Option(help="Cores: hex mask as taskset (f0 = cpu4-7) or list (0,2-3) [default: all usable].")
    ] = None,
    threads: Annotated[int | None, typer.Option(help="Intra-op threads [default: one per core].")] = None,
    refresh: Annotated[bool, typer.Option("--refresh", help="Measure again even if a figure is stored.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    store: StoreOption = None,
) -> int:
    """Measure this device's dense fp32 GEMM GFLOP/s and copy GB/s (once per placement; stored and reused)."""
    from edgebench.cli import fail
    from edgebench.workflows.peak import PeakNotMeasured, PeakRequest, device_peak

    try:
        figure = device_peak(PeakRequest(cores, threads, refresh, store), notify=say)
    except PeakNotMeasured as exc:
        return fail(str(exc), 1)
    if as_json:
        typer.echo(json.dumps(figure, indent=2))
    else:
        typer.echo(
            f"{figure['key']}\n  GEMM {figure['gemm_gflops']:.1f} GFLOP/s (fp32, n={figure['gemm_size']})\n"
            f"  copy {figure['copy_gbps']:.1f} GB/s (read + write, {figure['copy_bytes'] // MIB} MiB)\n"
            f"  ridge {figure['gemm_gflops'] / figure['copy_gbps']:.1f} FLOP/B; measured {figure['measured_at']}"
        )
        if figure.get("busy"):
            typer.echo(f"  warning: measured on a busy device ({figure['busy']}): measured again when next needed")
    return 0
