"""``edgebench partition``: DNNTune's deployment analyzer, the best device/server split of a model.

The device's per-layer costs come from the newest stored layer-traced trial of the model on this device (one is
run and stored when there is none), the server's from ``--cloud-speedup`` or another device's traced trial, the
tensors that cross each cut from a real forward pass through the torch backend.
"""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError
from edgebench.units import MAX_QUANTITY

if TYPE_CHECKING:
    from collections.abc import Callable

    from pydantic import BaseModel

    from edgebench.graph.layer_graph import LayerGraph
    from edgebench.measure.layers import LayerReport
    from edgebench.partition.analysis import PartitionAnalysis
    from edgebench.partition.costs import CostTable
    from edgebench.partition.network import NetworkProfile
    from edgebench.records.result import TrialResult

_OBJECTIVES = ("latency", "energy")
_MODES = ("infer", "train")
DEFAULT_SPEEDUP = 10.0


def partition(
    model: Annotated[
        str, typer.Option("--model", "-m", help="A workload of `edgebench models`, or an ONNX model file.")
    ] = "mobilenet_v2",
    network: Annotated[str, typer.Option(help="Link profile: 3g, lte (4g), wifi, or one in --networks.")] = "wifi",
    objective: Annotated[str, typer.Option(help="Rank by latency or device energy.")] = "latency",
    mode: Annotated[str, typer.Option(help="infer (DNNTune) or train (split learning, per step).")] = "infer",
    cloud_speedup: Annotated[
        float | None, typer.Option(help="The server runs each layer N times faster than the device (default 10).")
    ] = None,
    cloud_trial: Annotated[
        str | None, typer.Option(help="A stored layer-traced trial of the model on the server (id or prefix).")
    ] = None,
    trial: Annotated[
        str | None,
        typer.Option(help="The device's layer-traced trial (default: the newest of the model on this host)."),
    ] = None,
    batch_size: Annotated[
        int | None, typer.Option("--batch-size", "-b", help="Only trials at this batch size; a new one runs at it.")
    ] = None,
    networks: Annotated[
        Path | None, typer.Option(help="YAML file of your own profiles: networks: {name: {up_mbps, ...}}.")
    ] = None,
    estimate_energy: Annotated[
        str | None,
        typer.Option(help="With no power sensor: pick (or run) a trial with this labelled estimate, idle=..W,max=..W."),
    ] = None,
    sweep_bandwidth: Annotated[
        str | None, typer.Option(help="Show where the best point moves over an uplink range, e.g. 0.5-100Mbps.")
    ] = None,
    transfer_dtype: Annotated[
        str | None, typer.Option(help="Send floating-point tensors as fp16, bf16 or int8 (compression).")
    ] = None,
    depth: Annotated[
        int | None, typer.Option(help="Cut only between modules at this depth (2: after each features.N block).")
    ] = None,
    plot: Annotated[Path | None, typer.Option(help="Save a PNG of the cost per point, components stacked.")] = None,
    steps: Annotated[int, typer.Option(help="Measured steps of a trial run because none is stored.")] = 20,
    warmup: Annotated[int, typer.Option(help="Warm-up steps of that trial.")] = 3,
    table4: Annotated[
        bool,
        typer.Option(
            "--table4",
            help="DNNTune's Table 4: one row per device (the newest stored layer-traced trial of the model from each "
            "device record): mobile-only, cloud-only, mobile-cloud, saving, partition point.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object: the rows and the choice.")] = False,
    predicted: Annotated[
        bool,
        typer.Option(
            "--predicted",
            help="Use the device's per-layer costs predicted by `edgebench predict` from its stored traced trials "
            "(no trial of this configuration is run); every device figure is labelled predicted.",
        ),
    ] = False,
    input_shape: Annotated[
        str | None, typer.Option(help="With --predicted: the per-sample input, e.g. 3x64x64 [default: the model's].")
    ] = None,
    store: StoreOption = None,
) -> int:
    """The best point to split a model between this device and a server, for latency or device energy."""
    from edgebench.cli.options import parse
    from edgebench.partition.costs import TRANSFER_DTYPES
    from edgebench.partition.network import choose_network, load_networks
    from edgebench.partition.sweep import parse_bandwidth_range

    if objective not in _OBJECTIVES:
        raise UsageError("--objective", f"{objective!r} is not an objective; choose latency or energy")
    if mode not in _MODES:
        raise UsageError("--mode", f"{mode!r} is not a mode; choose infer or train")
    if cloud_speedup is not None and not 0 < cloud_speedup <= MAX_QUANTITY:  # nan and inf are no speed-up either
        raise UsageError("--cloud-speedup", "must be a number above 0 (10 = the server is ten times faster)")
    if cloud_speedup is not None and cloud_trial is not None:
        raise UsageError("--cloud-trial", "give the server's costs once: --cloud-trial or --cloud-speedup, not both")
    if transfer_dtype is not None and transfer_dtype not in TRANSFER_DTYPES:
        raise UsageError("--transfer-dtype", f"{transfer_dtype!r}: choose one of {', '.join(TRANSFER_DTYPES)}")
    if batch_size is not None and batch_size < 1:
        raise UsageError("--batch-size", "must be at least 1")
    if depth is not None and depth < 1:
        raise UsageError("--depth", "must be 1 or more (1 = between the model's top-level children)")
    if steps < 1 or warmup < 0:
        raise UsageError("--steps" if steps < 1 else "--warmup", "must be at least 1 (steps) / 0 (warmup)")
    sweep = parse("--sweep-bandwidth", sweep_bandwidth, parse_bandwidth_range)
    link = choose_network(load_networks(networks), network)
    if plot is not None and plot.suffix.lower() != ".png":
        raise UsageError("--plot", f"{plot} is not a .png path")
    if plot is not None:
        from edgebench.report.outputs import check_output_file

        check_output_file("--plot", plot, "partition.png")  # before the analysis, not a traceback after it

    wanted = _model_key(model, "--model" if trial is None else None)
    if table4:
        if predicted:
            raise UsageError("--predicted", "--table4 tabulates measured trials of each device; leave --predicted out")
        return _table4(store, model, wanted, batch_size, mode, objective, link, cloud_speedup, cloud_trial,
                       transfer_dtype, depth, trial, plot, as_json)  # fmt: skip
    if predicted:
        if trial is not None:
            raise UsageError("--trial", "names a measured trial; leave it out with --predicted (or --predicted out)")
        if wanted.startswith("file:"):
            raise UsageError("--predicted", "predicts zoo models from their layers; a model file is measured: drop it")
        if estimate_energy is not None or objective == "energy":
            raise UsageError(
                "--predicted" if objective != "energy" else "--objective",
                "device energy is not predicted per layer; rank by latency with --predicted",
            )
        cloud = _layer_costs(store, cloud_trial, "--cloud-trial") if cloud_trial is not None else None
        speedup = cloud_speedup if cloud_speedup is not None else (None if cloud else DEFAULT_SPEEDUP)
        table = _predicted_table(store, wanted, batch_size, mode, input_shape, speedup, cloud)
        if cloud is None and cloud_speedup is None:
            table = _labelled_default(table)
        return _show(_analyze(table, link, objective, transfer_dtype, sweep, depth), plot, as_json)
    if input_shape is not None:
        raise UsageError("--input-shape", "sets the input of a predicted configuration; add --predicted")
    mobile_id = trial or _newest_trial(store, wanted, batch_size, estimate_energy, mode)
    if mobile_id is None:
        mobile_id = _run_traced_trial(store, model, batch_size, mode, estimate_energy, steps, warmup)
    mobile = _layer_costs(store, mobile_id, "--trial")
    if trial is not None:  # the model is the trial's own: --model (a default) is not checked against it
        wanted = _trial_key(mobile[0])
    elif _trial_key(mobile[0]) != wanted:
        raise UsageError("--trial", f"trial {mobile[0].trial_id} is of {mobile[0].trial.model}, not {model}")
    cloud = None
    if cloud_trial is not None:
        cloud = _layer_costs(store, cloud_trial, "--cloud-trial")
        if _trial_key(cloud[0]) != wanted:
            raise UsageError(
                "--cloud-trial", f"trial {cloud[0].trial_id} is of {cloud[0].trial.model}, not {mobile[0].trial.model}"
            )

    analysis = _analysis(mobile, cloud, cloud_speedup, mode, objective, link, transfer_dtype, sweep, depth)
    return _show(analysis, plot, as_json)


def _show(analysis: PartitionAnalysis, plot: Path | None, as_json: bool) -> int:
    """The analysis as a table (or JSON), and its plot."""
    from edgebench.report.partition import print_partition
    from edgebench.report.partition_plot import save_plot

    return _emit(analysis, save_plot, print_partition, plot, as_json)


def _emit(
    record: BaseModel, save: Callable[[Any, Path], None], show: Callable[[Any], None], plot: Path | None, as_json: bool
) -> int:
    """One partition result out: its plot where asked, then JSON or the printed table with the plot's path."""
    if plot is not None:
        save(record, plot)
    if as_json:
        typer.echo(record.model_dump_json(indent=2))
    else:
        show(record)
        if plot is not None:
            typer.echo(f"plot: {plot}")
    return 0


def _device_label(result: TrialResult) -> str:
    """A device as a row names it: its configured name or hostname, the sensor tree it was read through (a
    captured device's ``--sysfs-root``), and the target where it is not this host."""
    device = result.device
    label = device.device_name or device.hostname or "?"
    if device.sysfs_root and device.sysfs_root != "/":
        label += f" [{Path(device.sysfs_root).name}]"
    if result.target and result.target != "local":
        label += f" ({result.target})"
    return label


def _table4(
    store: Path | None, model: str, wanted: str, batch_size: int | None, mode: str, objective: str,
    link: NetworkProfile, cloud_speedup: float | None, cloud_trial: str | None, transfer_dtype: str | None,
    depth: int | None, trial: str | None, plot: Path | None, as_json: bool,
) -> int:  # fmt: skip
    """One partition analysis per device record, tabulated as DNNTune's Table 4."""
    from edgebench.partition.table4 import table4
    from edgebench.store import Store, default_store_path

    if trial is not None:
        raise UsageError("--trial", "--table4 takes the newest trial of each device; leave --trial out")
    newest: dict[str, str] = {}
    skipped: list[str] = []
    if Path(store or default_store_path()).exists():
        with Store(store) as db:
            for r in reversed(db.trials()):
                if r.status != "ok" or r.trace_summary is None or r.trace_summary.granularity != "layers":
                    continue
                if r.trial.mode != mode or (batch_size is not None and r.trial.batch_size != batch_size):
                    continue
                if _trial_key(r) != wanted:
                    continue
                label = _device_label(r)
                has_energy = r.energy.source is not None or (
                    r.estimated_energy is not None and r.estimated_energy.avg_power_w is not None
                )
                if objective == "energy" and not has_energy:
                    if label not in newest and label not in skipped:
                        skipped.append(label)
                    continue
                newest.setdefault(label, r.trial_id)
    if not newest:
        raise UsageError(
            "--table4",
            f"no stored layer-traced {mode} trial of {model}"
            + (" with an energy figure" if objective == "energy" else "")
            + f"; run `edgebench run -m {model} --mode {mode} --trace layers` on each device (a power sensor, or "
            "--estimate-energy, for energy)",
        )
    cloud = _layer_costs(store, cloud_trial, "--cloud-trial") if cloud_trial is not None else None
    if cloud is not None and _trial_key(cloud[0]) != wanted:
        raise UsageError("--cloud-trial", f"trial {cloud[0].trial_id} is of {cloud[0].trial.model}, not {model}")
    analyses = []
    for label, trial_id in newest.items():
        mobile = _layer_costs(store, trial_id, "--table4")
        analysis = _analysis(mobile, cloud, cloud_speedup, mode, objective, link, transfer_dtype, None, depth)
        analyses.append((label, trial_id, analysis))
    notes = [f"{label}: no energy figure (no power sensor, no estimate): not in the table" for label in skipped
             if label not in newest]  # fmt: skip
    if len(newest) == 1:
        notes.append("one device only: trials of other devices (another --sysfs-root tree, --target, or imported "
                     "ones) add rows")  # fmt: skip
    from edgebench.report.partition import print_table4
    from edgebench.report.partition_plot import save_table4_plot

    return _emit(table4(analyses, notes), save_table4_plot, print_table4, plot, as_json)


def _analysis(
    mobile: tuple[TrialResult, LayerReport], cloud: tuple[TrialResult, LayerReport] | None,
    cloud_speedup: float | None, mode: str, objective: str, link: NetworkProfile, transfer_dtype: str | None,
    sweep: tuple[float, float] | None, depth: int | None,
) -> PartitionAnalysis:  # fmt: skip
    """The analysis of one device's trial (its own graph), the server's costs from a speed-up or ``cloud``."""
    from edgebench.partition.costs import build_table

    graph = _graph(mobile[0])
    result = mobile[0]
    speedup = cloud_speedup if cloud_speedup is not None else (None if cloud else DEFAULT_SPEEDUP)
    table = build_table(graph, "train" if mode == "train" else "infer", mobile, cloud_speedup=speedup, cloud=cloud)
    if cloud is None and cloud_speedup is None:
        table = _labelled_default(table)
    if objective == "energy" and table.energy_source is None:
        if result.trial.estimate_energy:  # asked for, but the power model had no utilization to apply to
            steps = result.latency.measured_steps
            raise UsageError(
                "--steps",
                f"energy cannot be ranked: trial {result.trial_id}'s --estimate-energy could not be applied, its "
                f"{steps} measured steps too short a window to resolve the CPU's utilization; give more --steps",
            )
        raise UsageError(
            "--objective",
            f"energy cannot be ranked: trial {result.trial_id} had no power sensor and no estimate; "
            "give --estimate-energy idle=..W,max=..W (runs a trial with a labelled estimate) or use latency",
        )
    return _analyze(table, link, objective, transfer_dtype, sweep, depth)


def _analyze(
    table: CostTable, link: NetworkProfile, objective: str, transfer_dtype: str | None,
    sweep: tuple[float, float] | None, depth: int | None,
) -> PartitionAnalysis:  # fmt: skip
    """The best split of ``table`` (measured or predicted costs) over ``link`` for ``objective``."""
    from edgebench.partition.analysis import analyze
    from edgebench.partition.solver import block_points

    points = block_points(table, depth) if depth is not None else None
    return analyze(
        table,
        link,
        "energy" if objective == "energy" else "latency",
        transfer_dtype=transfer_dtype,
        sweep_mbps=sweep,
        points=points,
    )


def _model_key(model: str, flag: str | None) -> str:
    """What identifies the model across trials: a workload's canonical name, or ``file:<sha256>`` of a model file
    (its bytes, wherever it was run from)."""
    from edgebench.backends import model_file as mf

    if mf.looks_like_file(model):
        try:
            return "file:" + mf.file_digest(mf.check_path(model))
        except (ValueError, OSError) as exc:
            raise UsageError(flag or "--model", str(exc)) from None
    from edgebench.workloads import named_workload

    try:
        return named_workload(model).name  # the user typed it (or its default): theirs to import
    except KeyError as exc:
        raise UsageError(flag or "--model", str(exc.args[0])) from None


def _trial_key(result: TrialResult) -> str | None:
    if result.trial.model_sha256 is not None:
        return "file:" + result.trial.model_sha256
    from edgebench.workloads import get_workload

    try:
        return get_workload(result.trial.model).name
    except Exception:  # a custom model that no longer imports
        return None


def _graph(result: TrialResult) -> LayerGraph:
    """The cut graph of the trial's model: a zoo model's from a torch forward pass, a model file's from its ONNX
    graph (the file must still be there, with the same bytes)."""
    trial = result.trial
    try:
        if trial.model_file is None:
            from edgebench.graph.graph_cache import trial_graph

            return trial_graph(result)
        from edgebench.backends import model_file as mf
        from edgebench.graph.onnx_graph import file_graph

        path = mf.check_path(trial.model_file)
        if mf.file_digest(path) != trial.model_sha256:
            raise ValueError(f"{path} changed since trial {result.trial_id} ran (its bytes differ); rerun the trial")
        info = mf.inspect(path)
        feeds, batch = mf.resolve_feeds(
            info, batch_size=trial.batch_size, input_name=trial.input_name, input_shape=trial.input_shape
        )
        return file_graph(info, feeds, batch)
    except ValueError as exc:
        raise UsageError("--model", f"cannot partition: {exc}") from None


def _predicted_table(
    store: Path | None,
    model: str,
    batch_size: int | None,
    mode: str,
    input_shape: str | None,
    speedup: float | None,
    cloud: tuple[TrialResult, LayerReport] | None,
) -> CostTable:
    """The device's per-module times predicted from its stored traced trials (``edgebench predict``)."""
    from edgebench.cli.predict import check_sklearn, parse_input_shape
    from edgebench.graph.graph_cache import cached_workload_graph
    from edgebench.measure.layers import LayerRow
    from edgebench.partition.costs import build_predicted_table
    from edgebench.predict.step import Predictor

    shape = parse_input_shape(input_shape)
    size = batch_size or (1 if mode == "infer" else 8)
    check_sklearn()
    from edgebench.predict.stored import Selection

    predictor = Predictor.from_store(store, Selection(mode=mode))
    step = predictor.step(model, size, mode=mode, input_shape=shape)
    try:
        graph = cached_workload_graph(model, size, input_shape=shape)
    except ValueError as exc:
        raise UsageError("--model", str(exc)) from None

    def row(name: str, kind: str, forward_ms: float, backward_ms: float) -> LayerRow:
        total = forward_ms + backward_ms
        return LayerRow(name=name, type=kind, depth=0, calls_per_step=1.0, forward_ms=forward_ms,
                        backward_ms=backward_ms, optimizer_ms=0.0, total_ms=total, share_pct=0.0)  # fmt: skip

    rows = {layer.name: row(layer.name, layer.type, layer.forward_ms, layer.backward_ms) for layer in step.layers}
    other = row("(other: loss, optimizer, framework)", "", step.overhead_ms, 0.0)
    source = (
        f"edgebench predict, from {len(step.learned_from)} traced trials of this device; the step "
        f"{step.step_ms:.2f} ms ({int(step.level * 100)}% interval {step.low_ms:.2f}-{step.high_ms:.2f} ms)"
    )
    notes = tuple(f"extrapolation: {flag}" for flag in step.extrapolation)
    return build_predicted_table(
        graph, "train" if mode == "train" else "infer", rows, other, source=source, cloud_speedup=speedup,
        cloud=cloud, notes=notes,
    )  # fmt: skip


def _labelled_default(table: CostTable) -> CostTable:
    return replace(table, cloud_source=table.cloud_source + " (the default; set --cloud-speedup or --cloud-trial)")


def _newest_trial(
    store: Path | None, model: str, batch_size: int | None, estimate: str | None, mode: str
) -> str | None:
    """The newest ok layer-traced trial of ``model`` from this host (with an energy figure when one is asked for)."""
    from edgebench.store import Store, default_store_path

    if not Path(store or default_store_path()).exists():
        return None
    host = socket.gethostname()
    wanted = None
    if estimate is not None:
        from edgebench.cli.options import parse
        from edgebench.measure.estimate import parse_power_model

        model_ = parse("--estimate-energy", estimate, parse_power_model)
        wanted = f"estimated: {model_.describe()}" if model_ else None
    with Store(store) as db:
        for r in reversed(db.trials()):
            if r.status != "ok" or r.trace_summary is None or r.trace_summary.granularity != "layers":
                continue
            if r.device.hostname != host or (batch_size is not None and r.trial.batch_size != batch_size):
                continue
            measured = r.energy.source is not None
            estimated = r.estimated_energy.source if r.estimated_energy else None
            if estimate is not None and not measured and estimated != wanted:
                continue  # measured energy serves any request; an estimate only with the same coefficients
            if _trial_key(r) != model:
                continue
            return r.trial_id
    return None


def _run_traced_trial(
    store: Path | None, model: str, batch_size: int | None, mode: str, estimate: str | None, steps: int, warmup: int
) -> str:
    """Run a layer-traced trial of ``model`` here through the launch path and store it; a failed trial is an error
    naming why."""
    from edgebench.cli.options import build
    from edgebench.config.trial import make_trial
    from edgebench.launch.session import Launcher, open_store
    from edgebench.targets import open_target

    size = batch_size or (1 if mode == "infer" else 8)
    from edgebench.backends.model_file import looks_like_file

    if looks_like_file(model):  # a model file: its own batch unless one is asked for, inference
        size = batch_size
    values = {"model": model, "batch_size": size, "mode": mode, "steps": steps, "warmup": warmup, "trace": "layers",
              "estimate_energy": estimate, "infer_steps": max(steps, 5)}  # fmt: skip
    trial = build(make_trial, values, {"estimate_energy": "--estimate-energy", "batch_size": "--batch-size"})
    typer.echo(
        f"no stored layer-traced trial of {model} on this device: running one (batch {size}, {steps} steps)", err=True
    )
    db = open_store(store)  # checked before the trial runs; a failing write keeps the trial in a rescue file
    assert db is not None
    with db:
        launcher = Launcher(open_target(), store=db)
        with launcher:
            finished = launcher.launch(trial).finished
        launcher.keep(finished)
    if not finished.result.ok:
        raise UsageError("--model", f"the traced trial {finished.result.status}: {finished.result.reason}")
    return finished.trial_id


def _layer_costs(store: Path | None, trial_id: str, flag: str) -> tuple[TrialResult, LayerReport]:
    """A stored trial and its per-layer report (exclusive times per module, power where measured)."""
    from edgebench.measure.layers import layer_report
    from edgebench.store.trials import load_trial, power_series

    try:
        stored = load_trial(store, trial_id)
    except UsageError as exc:
        raise UsageError(flag, exc.message) from None
    result = stored.result
    if stored.spans is None or stored.spans.granularity != "layers":
        raise UsageError(
            flag,
            f"trial {result.trial_id} has no layer spans; record them with "
            f"`edgebench run --model {result.trial.model} --trace layers`",
        )
    report = layer_report(result, stored.spans, stored.events, stored.samples, power=power_series(stored, None))
    return result, report
