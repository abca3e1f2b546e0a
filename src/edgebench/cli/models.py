"""``edgebench models``: every workload with its input, parameters, FLOPs and published reference figures."""

from __future__ import annotations

import json
from typing import Annotated

import typer


def models(
    names: Annotated[
        list[str] | None, typer.Argument(help="Workloads to show (names, aliases or module:factory) [default: all].")
    ] = None,
    preset: Annotated[
        str | None, typer.Option(help="Show each workload at this input preset (e.g. cifar10) where it has one.")
    ] = None,
    flops: Annotated[bool, typer.Option("--flops/--no-flops", help="Count FLOPs (a few seconds per model).")] = True,
    measure: Annotated[
        bool,
        typer.Option(
            "--measure/--no-measure",
            help="Count parameters and FLOPs on the torch models; --no-measure lists the specs alone, without torch.",
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list instead of a table.")] = False,
) -> int:
    """List workloads: domain, input, parameters, forward and training FLOPs, and their published figures."""
    from edgebench.report.models import print_models
    from edgebench.workflows.models import describe_models

    listing = describe_models(names or (), preset=preset, flops=flops, measure=measure)
    if as_json:
        typer.echo(json.dumps([{**i.model_dump(), "mnn": listing.mnn.get(i.name)} for i in listing.models], indent=2))
        return 0
    print_models(listing.models, listing.mnn, listing.mnn_source)
    return 0
