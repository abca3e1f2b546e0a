"""``edgebench partition``: DNNTune's deployment analyzer, the best device/server split of a model.

The analysis (the device's per-layer costs from a stored layer-traced trial, run when there is none, or predicted;
the server's from ``--cloud-speedup`` or another device's traced trial) is :mod:`edgebench.workflows.partition`'s;
this module reads the flags and prints the table, the JSON or Table 4.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from edgebench.cli.options import StoreOption, request_options, say
from edgebench.workflows.partition import PartitionRequest

#: The options of ``partition``: the fields of :class:`PartitionRequest` (their types and defaults are its) and two of
#: the command's own, in the order ``--help`` lists them.
OPTIONS: dict[str, Any] = {
    "model": typer.Option("--model", "-m", help="A workload of `edgebench models`, or an ONNX model file."),
    "network": typer.Option(help="Link profile: 3g, lte (4g), wifi, or one in --networks."),
    "objective": typer.Option(help="Rank by latency or device energy."),
    "mode": typer.Option(help="infer (DNNTune) or train (split learning, per step)."),
    "cloud_speedup": typer.Option(help="The server runs each layer N times faster than the device (default 10)."),
    "cloud_trial": typer.Option(help="A stored layer-traced trial of the model on the server (id or prefix)."),
    "trial": typer.Option(help="The device's layer-traced trial (default: the newest of the model on this host)."),
    "batch_size": typer.Option(
        "--batch-size", "-b", help="Only trials at this batch size; a new one runs at it."
    ),
    "networks": typer.Option(help="YAML file of your own profiles: networks: {name: {up_mbps, ...}}."),
    "estimate_energy": typer.Option(
        help="With no power sensor: pick (or run) a trial with this labelled estimate, idle=..W,max=..W."
    ),
    "sweep_bandwidth": typer.Option(help="Show where the best point moves over an uplink range, e.g. 0.5-100Mbps."),
    "transfer_dtype": typer.Option(help="Send floating-point tensors as fp16, bf16 or int8 (compression)."),
    "depth": typer.Option(help="Cut only between modules at this depth (2: after each features.N block)."),
    "plot": typer.Option(help="Save a PNG of the cost per point, components stacked."),
    "steps": typer.Option(help="Measured steps of a trial run because none is stored."),
    "warmup": typer.Option(help="Warm-up steps of that trial."),
    "table4": (Annotated[bool, typer.Option(
        "--table4",
        help="DNNTune's Table 4: one row per device (the newest stored layer-traced trial of the model from each "
        "device record): mobile-only, cloud-only, mobile-cloud, saving, partition point.",
    )], False),
    "as_json": (Annotated[bool, typer.Option("--json", help="Print one JSON object: the rows and the choice.")], False),
    "predicted": typer.Option(
        "--predicted",
        help="Use the device's per-layer costs predicted by `edgebench predict` from its stored traced trials "
        "(no trial of this configuration is run); every device figure is labelled predicted.",
    ),
    "input_shape": typer.Option(help="With --predicted: the per-sample input, e.g. 3x64x64 [default: the model's]."),
    "target": typer.Option(
        help="The device: its newest stored trial is used, and a trial run because none is stored runs there "
        "(local, ssh://[user@]host[:port], adb://SERIAL or a configured name) [default: local]."
    ),
    "generation": typer.Option(
        "--generation",
        help="A language model's generation, split per token: what crosses at each block (hidden states, the next "
        "token) and the KV cache handed over, from its stored trial's timed generation.",
    ),
    "context": typer.Option(help="With --generation: the context length (of the trial's) [default: its longest]."),
    "store": StoreOption,
}  # fmt: skip


def partition(**options: Any) -> int:
    """The best point to split a model between this device and a server, for latency or device energy."""
    from edgebench.report.partition import print_partition, print_table4
    from edgebench.workflows.partition import analyse_partition
    from edgebench.workflows.partition import table4 as tabulate

    table4, as_json = options.pop("table4"), options.pop("as_json")
    request = PartitionRequest(**options)
    if request.generation:
        from edgebench.report.partition import print_generation_partition
        from edgebench.workflows.partition import analyse_generation

        split = analyse_generation(request)
        typer.echo(split.model_dump_json(indent=2)) if as_json else print_generation_partition(split)
        return 0
    record = tabulate(request) if table4 else analyse_partition(request, notify=say)
    if as_json:
        typer.echo(record.model_dump_json(indent=2))
        return 0
    if table4:
        print_table4(record)  # type: ignore[arg-type]
    else:
        print_partition(record)  # type: ignore[arg-type]
    if request.plot is not None:
        typer.echo(f"plot: {request.plot}")
    return 0


partition.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    request_options(PartitionRequest, OPTIONS), return_annotation=int
)
