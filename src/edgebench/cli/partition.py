"""``edgebench partition``: DNNTune's deployment analyzer, the best device/server split of a model.

The analysis (the device's per-layer costs from a stored layer-traced trial, run when there is none, or predicted;
the server's from ``--cloud-speedup`` or another device's traced trial) is :mod:`edgebench.workflows.partition`'s;
this module reads the flags and prints the table, the JSON or Table 4.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import StoreOption, say
from edgebench.workflows.partition import PartitionRequest

ModelOption = Annotated[
    str, typer.Option("--model", "-m", help="A workload of `edgebench models`, or an ONNX model file.")
]
NetworkOption = Annotated[str, typer.Option(help="Link profile: 3g, lte (4g), wifi, or one in --networks.")]
ObjectiveOption = Annotated[str, typer.Option(help="Rank by latency or device energy.")]
ModeOption = Annotated[str, typer.Option(help="infer (DNNTune) or train (split learning, per step).")]
CloudSpeedupOption = Annotated[
    float | None, typer.Option(help="The server runs each layer N times faster than the device (default 10).")
]
CloudTrialOption = Annotated[
    str | None, typer.Option(help="A stored layer-traced trial of the model on the server (id or prefix).")
]
TrialOption = Annotated[
    str | None,
    typer.Option(help="The device's layer-traced trial (default: the newest of the model on this host)."),
]
BatchSizeOption = Annotated[
    int | None, typer.Option("--batch-size", "-b", help="Only trials at this batch size; a new one runs at it.")
]
NetworksOption = Annotated[
    Path | None, typer.Option(help="YAML file of your own profiles: networks: {name: {up_mbps, ...}}.")
]
EstimateEnergyOption = Annotated[
    str | None,
    typer.Option(help="With no power sensor: pick (or run) a trial with this labelled estimate, idle=..W,max=..W."),
]
SweepBandwidthOption = Annotated[
    str | None, typer.Option(help="Show where the best point moves over an uplink range, e.g. 0.5-100Mbps.")
]
TransferDtypeOption = Annotated[
    str | None, typer.Option(help="Send floating-point tensors as fp16, bf16 or int8 (compression).")
]
DepthOption = Annotated[
    int | None, typer.Option(help="Cut only between modules at this depth (2: after each features.N block).")
]
PlotOption = Annotated[Path | None, typer.Option(help="Save a PNG of the cost per point, components stacked.")]
StepsOption = Annotated[int, typer.Option(help="Measured steps of a trial run because none is stored.")]
WarmupOption = Annotated[int, typer.Option(help="Warm-up steps of that trial.")]
Table4Option = Annotated[
    bool,
    typer.Option(
        "--table4",
        help="DNNTune's Table 4: one row per device (the newest stored layer-traced trial of the model from each "
        "device record): mobile-only, cloud-only, mobile-cloud, saving, partition point.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object: the rows and the choice.")]
PredictedOption = Annotated[
    bool,
    typer.Option(
        "--predicted",
        help="Use the device's per-layer costs predicted by `edgebench predict` from its stored traced trials "
        "(no trial of this configuration is run); every device figure is labelled predicted.",
    ),
]
InputShapeOption = Annotated[
    str | None, typer.Option(help="With --predicted: the per-sample input, e.g. 3x64x64 [default: the model's].")
]


def partition(
    model: ModelOption = PartitionRequest.model,
    network: NetworkOption = PartitionRequest.network,
    objective: ObjectiveOption = PartitionRequest.objective,
    mode: ModeOption = PartitionRequest.mode,
    cloud_speedup: CloudSpeedupOption = PartitionRequest.cloud_speedup,
    cloud_trial: CloudTrialOption = PartitionRequest.cloud_trial,
    trial: TrialOption = PartitionRequest.trial,
    batch_size: BatchSizeOption = PartitionRequest.batch_size,
    networks: NetworksOption = PartitionRequest.networks,
    estimate_energy: EstimateEnergyOption = PartitionRequest.estimate_energy,
    sweep_bandwidth: SweepBandwidthOption = PartitionRequest.sweep_bandwidth,
    transfer_dtype: TransferDtypeOption = PartitionRequest.transfer_dtype,
    depth: DepthOption = PartitionRequest.depth,
    plot: PlotOption = PartitionRequest.plot,
    steps: StepsOption = PartitionRequest.steps,
    warmup: WarmupOption = PartitionRequest.warmup,
    table4: Table4Option = False,
    as_json: JsonOption = False,
    predicted: PredictedOption = PartitionRequest.predicted,
    input_shape: InputShapeOption = PartitionRequest.input_shape,
    store: StoreOption = None,
) -> int:
    """The best point to split a model between this device and a server, for latency or device energy."""
    from edgebench.report.partition import print_partition, print_table4
    from edgebench.workflows.partition import partition as analyse
    from edgebench.workflows.partition import table4 as tabulate

    request = PartitionRequest(
        model, network, objective, mode, cloud_speedup, cloud_trial, trial, batch_size, networks, estimate_energy,
        sweep_bandwidth, transfer_dtype, depth, plot, steps, warmup, predicted, input_shape, store,
    )  # fmt: skip
    record = tabulate(request) if table4 else analyse(request, notify=say)
    if as_json:
        typer.echo(record.model_dump_json(indent=2))
        return 0
    if table4:
        print_table4(record)  # type: ignore[arg-type]
    else:
        print_partition(record)  # type: ignore[arg-type]
    if plot is not None:
        typer.echo(f"plot: {plot}")
    return 0
