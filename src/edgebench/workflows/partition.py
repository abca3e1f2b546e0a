"""DNNTune's deployment analyzer as a use case: the best point to split a model between the device and a server,
for latency or device energy, over a network link; and its Table 4 (one row per device).

The device's per-layer costs come from the newest stored layer-traced trial of the model on this device (one is
run and stored when there is none) or, with ``predicted``, from ``edgebench predict``'s model of the device; the
server's from a speed-up or another device's traced trial; the tensors that cross each cut from a real forward pass
through the torch backend (or a model file's ONNX graph).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.errors import UsageError
from edgebench.measure.trust import disturbances
from edgebench.units import MAX_QUANTITY
from edgebench.workflows.common import Notify, quiet

if TYPE_CHECKING:
    from edgebench.graph.layer_graph import LayerGraph
    from edgebench.measure.layers import LayerReport
    from edgebench.partition.analysis import PartitionAnalysis
    from edgebench.partition.costs import CostTable
    from edgebench.partition.generation import GenerationPartition
    from edgebench.partition.network import NetworkProfile
    from edgebench.partition.table4 import Table4
    from edgebench.records.result import TrialResult

OBJECTIVES = ("latency", "energy")
MODES = ("infer", "train")
#: The server's speed-up over the device when neither a speed-up nor a server trial is given (labelled as such).
DEFAULT_SPEEDUP = 10.0

#: A stored trial and its per-layer report (exclusive times per module, power where measured).
Traced = tuple["TrialResult", "LayerReport"]


@dataclass(frozen=True)
class PartitionRequest:
    """What to analyse: the model (a workload's name or an ONNX file), the link (a profile's name, or one of the
    ``networks`` YAML file), what to rank by, the mode, the server's costs (``cloud_speedup`` or ``cloud_trial``),
    the device's trial (None: the newest of the model on this host, run when there is none), and the analysis's
    options.  Each field is checked as its flag is, and an error names the flag."""

    model: str = "mobilenet_v2"
    network: str = "wifi"
    objective: str = "latency"
    mode: str = "infer"
    cloud_speedup: float | None = None
    cloud_trial: str | None = None
    trial: str | None = None
    batch_size: int | None = None
    networks: Path | None = None
    #: With no power sensor: pick (or run) a trial with this labelled estimate, ``idle=..W,max=..W``.
    estimate_energy: str | None = None
    #: An uplink range to show where the best point moves, e.g. ``0.5-100Mbps``.
    sweep_bandwidth: str | None = None
    transfer_dtype: str | None = None
    depth: int | None = None
    #: A PNG of the cost per point (or of Table 4), written by the workflow.
    plot: Path | None = None
    steps: int = 20
    warmup: int = 3
    predicted: bool = False
    input_shape: str | None = None
    #: The device: its stored trials are the ones picked, and a trial run because none is stored runs there
    #: (``local``, ``ssh://HOST``, ``adb://SERIAL`` or a configured name; None: this machine).
    target: str | None = None
    #: A language model's generation, split per token (:mod:`edgebench.partition.generation`), at this context
    #: length of the trial's generations (None: its longest).
    generation: bool = False
    context: int | None = None
    store: Path | None = None


@dataclass(frozen=True)
class _Checked:
    """The request's values read: the bandwidth range, the link, and the key that names the model across trials."""

    sweep: tuple[float, float] | None
    link: NetworkProfile
    wanted: str


def analyse_partition(request: PartitionRequest, *, notify: Notify = quiet) -> PartitionAnalysis:
    """The best split of the model between this device and a server over the link, with every point's costs.

    Measured costs come from a stored layer-traced trial (run and stored now when there is none: ``notify`` says
    so); predicted ones from the device's stored traced trials.  The plot, where asked, is written.
    """
    checked = _check(request)
    if request.predicted:
        analysis = _predicted(request, checked)
    else:
        if request.input_shape is not None:
            raise UsageError("--input-shape", "sets the input of a predicted configuration; add --predicted")
        analysis = _measured(request, checked, notify)
    if request.plot is not None:
        from edgebench.report.partition_plot import save_plot

        save_plot(analysis, request.plot)
    return analysis


def analyse_generation(request: PartitionRequest) -> GenerationPartition:
    """A language model's generation split between the device and a server, from the newest stored trial of it on
    this host that timed generation (or ``request.trial``), at ``request.context`` (its longest by default)."""
    from edgebench.partition.generation import generation_partition
    from edgebench.store import Store, default_store_path
    from edgebench.workloads import get_workload
    from edgebench.workloads.lm import decoder_shape

    checked = _check(request)
    for flag, given in (
        ("--mode", request.mode != "infer"),
        ("--objective", request.objective != "latency"),
        ("--predicted", request.predicted),
        ("--transfer-dtype", request.transfer_dtype is not None),
        ("--cloud-trial", request.cloud_trial is not None),
        ("--depth", request.depth is not None),
    ):
        if given:  # fmt: skip
            raise UsageError(flag, "--generation splits a language model's measured generation by latency; drop it")
    shape = decoder_shape(get_workload(checked.wanted)) if not checked.wanted.startswith("file:") else None
    if shape is None:
        raise UsageError("--generation", f"{request.model} is not a decoder language model (lm_10m, smollm2_135m...)")
    found = None
    if Path(request.store or default_store_path()).exists():
        with Store(request.store) as db:
            candidates = [db.get(request.trial)] if request.trial else reversed(db.trials())
            found = next((r for r in candidates if r.ok and r.language_model and r.language_model.generation
                          and _trial_key(r) == checked.wanted
                          and (request.trial or r.device.hostname == socket.gethostname())), None)  # fmt: skip
    if found is None:
        raise UsageError("--generation", f"no stored trial of {checked.wanted} timed generation on this host: run "
                                         f"`edgebench run --model {checked.wanted}` first")  # fmt: skip
    runs = {g.context_tokens: g for g in found.language_model.generation}  # type: ignore[union-attr]
    context = request.context or max(runs)
    if context not in runs:
        raise UsageError("--context", f"trial {found.trial_id} timed contexts {', '.join(map(str, runs))}")
    run = runs[context]
    if run.decode_ms_per_token is None:
        raise UsageError("--context", f"trial {found.trial_id} decoded no token at {context}")
    speedup = request.cloud_speedup or DEFAULT_SPEEDUP
    source = f"--cloud-speedup {speedup:g}" + (" (the default)" if request.cloud_speedup is None else "")
    return generation_partition(checked.wanted, found.trial_id, shape, context, run.new_tokens, run.ttft_ms,
                                run.decode_ms_per_token, checked.link, speedup, source)  # fmt: skip


def table4(request: PartitionRequest) -> Table4:
    """DNNTune's Table 4: one partition analysis per device record (the newest stored layer-traced trial of the
    model from each device), mobile-only, cloud-only and mobile-cloud side by side.  The plot, where asked, is
    written."""
    from edgebench.partition.table4 import table4 as tabulate

    checked = _check(request)
    if request.predicted:
        raise UsageError("--predicted", "--table4 tabulates measured trials of each device; leave --predicted out")
    if request.trial is not None:
        raise UsageError("--trial", "--table4 takes the newest trial of each device; leave --trial out")
    newest, skipped = _newest_of_each_device(request, checked.wanted)
    cloud = (
        _layer_costs(request.store, request.cloud_trial, "--cloud-trial") if request.cloud_trial is not None else None
    )
    if cloud is not None and _trial_key(cloud[0]) != checked.wanted:
        raise UsageError(
            "--cloud-trial", f"trial {cloud[0].trial_id} is of {cloud[0].trial.model}, not {request.model}"
        )
    analyses, repeats, disturbed = [], {}, {}
    notes = []
    for label, trial_id in newest.items():
        mobile = _layer_costs(request.store, trial_id, "--table4")
        if why := disturbances(mobile[0]):
            disturbed[trial_id] = "; ".join(why)
            notes.append(f"{label}: its newest trial {trial_id} is disturbed ({disturbed[trial_id]}) and it has "
                         "no undisturbed one: its row is shown and decides nothing; run it again on a quiet "
                         "device")  # fmt: skip
        analyses.append((label, trial_id, _analysis(request, checked, mobile, cloud, sweep=None)))
        repeats[label] = [_analysis(request, checked, _layer_costs(request.store, rid, "--table4"), cloud, sweep=None)
                          for rid in _repeat_ids(request.store, mobile[0])]  # fmt: skip
        if mobile[0].device.replayed:
            from edgebench.measure.trust import replayed_reason

            notes.append(f"{label}: {replayed_reason(mobile[0])}: its row is the tree's readings over this host's "
                         "steps, a device of its own, never this host's")  # fmt: skip
    notes += [f"{label}: no energy figure (no power sensor, no estimate): not in the table" for label in skipped
              if label not in newest and not label.startswith("trial ")]  # fmt: skip
    if len(newest) == 1:
        notes.append("one device only: trials of other devices (another --sysfs-root tree, --target, or imported "
                     "ones) add rows")  # fmt: skip
    table = tabulate(analyses, notes, repeats)
    rows = [row.model_copy(update={"disturbed": disturbed.get(row.trial_id)}) for row in table.rows]
    table = table.model_copy(update={"rows": rows})
    if request.plot is not None:
        from edgebench.report.partition_plot import save_table4_plot

        save_table4_plot(table, request.plot)
    return table


def _check(r: PartitionRequest) -> _Checked:
    """Every option checked before the analysis (and before a trial runs for it), each error naming its flag."""
    from edgebench.config.flags import parse
    from edgebench.partition.costs import TRANSFER_DTYPES
    from edgebench.partition.network import choose_network, load_networks
    from edgebench.partition.sweep import parse_bandwidth_range

    if r.objective not in OBJECTIVES:
        raise UsageError("--objective", f"{r.objective!r} is not an objective; choose latency or energy")
    if r.mode not in MODES:
        raise UsageError("--mode", f"{r.mode!r} is not a mode; choose infer or train")
    if r.cloud_speedup is not None and not 0 < r.cloud_speedup <= MAX_QUANTITY:  # nan and inf are no speed-up
        raise UsageError("--cloud-speedup", "must be a number above 0 (10 = the server is ten times faster)")
    if r.cloud_speedup is not None and r.cloud_trial is not None:
        raise UsageError("--cloud-trial", "give the server's costs once: --cloud-trial or --cloud-speedup, not both")
    if r.transfer_dtype is not None and r.transfer_dtype not in TRANSFER_DTYPES:
        raise UsageError("--transfer-dtype", f"{r.transfer_dtype!r}: choose one of {', '.join(TRANSFER_DTYPES)}")
    if r.batch_size is not None and r.batch_size < 1:
        raise UsageError("--batch-size", "must be at least 1")
    if r.depth is not None and r.depth < 1:
        raise UsageError("--depth", "must be 1 or more (1 = between the model's top-level children)")
    if r.steps < 1 or r.warmup < 0:
        raise UsageError("--steps" if r.steps < 1 else "--warmup", "must be at least 1 (steps) / 0 (warmup)")
    sweep = parse("--sweep-bandwidth", r.sweep_bandwidth, parse_bandwidth_range)
    link = choose_network(load_networks(r.networks), r.network)
    if r.plot is not None and r.plot.suffix.lower() != ".png":
        raise UsageError("--plot", f"{r.plot} is not a .png path")
    if r.plot is not None:
        from edgebench.report.outputs import check_output_file

        check_output_file("--plot", r.plot, "partition.png")  # before the analysis, not a traceback after it
    return _Checked(sweep, link, _model_key(r.model, "--model" if r.trial is None else None))


def _predicted(r: PartitionRequest, checked: _Checked) -> PartitionAnalysis:
    """The analysis on the device's per-layer costs predicted by ``edgebench predict`` (no trial is run)."""
    if r.trial is not None:
        raise UsageError("--trial", "names a measured trial; leave it out with --predicted (or --predicted out)")
    if checked.wanted.startswith("file:"):
        raise UsageError("--predicted", "predicts zoo models from their layers; a model file is measured: drop it")
    if r.estimate_energy is not None or r.objective == "energy":
        raise UsageError(
            "--predicted" if r.objective != "energy" else "--objective",
            "device energy is not predicted per layer; rank by latency with --predicted",
        )
    cloud = _layer_costs(r.store, r.cloud_trial, "--cloud-trial") if r.cloud_trial is not None else None
    speedup = r.cloud_speedup if r.cloud_speedup is not None else (None if cloud else DEFAULT_SPEEDUP)
    table = _predicted_table(r, checked.wanted, speedup, cloud)
    if cloud is None and r.cloud_speedup is None:
        table = _labelled_default(table)
    return _analyze(table, checked.link, r.objective, r.transfer_dtype, checked.sweep, r.depth)


def _measured(r: PartitionRequest, checked: _Checked, notify: Notify) -> PartitionAnalysis:
    """The analysis on the device's measured trial (the one named, the newest stored, or one run now)."""
    wanted: str | None = checked.wanted
    mobile_id = r.trial or _newest_trial(r.store, checked.wanted, r.batch_size, r.estimate_energy, r.mode, r.target)
    if mobile_id is None:
        mobile_id = _run_traced_trial(r, notify)
    mobile = _layer_costs(r.store, mobile_id, "--trial")
    if r.trial is not None:  # the model is the trial's own: --model (a default) is not checked against it
        wanted = _trial_key(mobile[0])
    elif _trial_key(mobile[0]) != wanted:
        raise UsageError("--trial", f"trial {mobile[0].trial_id} is of {mobile[0].trial.model}, not {r.model}")
    cloud = None
    if r.cloud_trial is not None:
        cloud = _layer_costs(r.store, r.cloud_trial, "--cloud-trial")
        if _trial_key(cloud[0]) != wanted:
            raise UsageError(
                "--cloud-trial", f"trial {cloud[0].trial_id} is of {cloud[0].trial.model}, not {mobile[0].trial.model}"
            )
    analysis = _analysis(r, checked, mobile, cloud, sweep=checked.sweep)
    return _across_repeats(r, checked, mobile[0], cloud, analysis)


def _across_repeats(
    r: PartitionRequest, checked: _Checked, result: TrialResult, cloud: Traced | None, analysis: PartitionAnalysis
) -> PartitionAnalysis:
    """The choice checked against the trial's configuration's other repeats (each a fresh worker process): a split
    every undisturbed repeat picks is clear, else the analysis says there is no clear best; a disturbed trial's
    choice is marked as deciding nothing."""
    from collections import Counter

    notes = []
    if why := disturbances(result):
        notes.append(f"warning: trial {result.trial_id} is disturbed ({'; '.join(why)}): its split decides "
                     "nothing; run it again on a quiet device")  # fmt: skip
    ids = _repeat_ids(r.store, result)
    if len(ids) >= 2:
        picks = Counter()
        for rid in ids:
            found = _analysis(r, checked, _layer_costs(r.store, rid, "--trial"), cloud, sweep=None).best
            picks[found.layer if found.kind not in ("mobile-only", "cloud-only") else found.kind] += 1
        if len(picks) > 1:
            shown = ", ".join(f"{p} in {n}" for p, n in picks.most_common())
            notes.append(f"no clear best split: the configuration's {len(ids)} repeats picked {shown}")
        else:
            notes.append(f"each of the configuration's {len(ids)} undisturbed repeats picks this split")
    elif result.repeat is None:
        notes.append("one trial: a split one process picked, which run-to-run variance can move (run the traced "
                     "trial with --repeats 3 to see whether its repeats agree)")  # fmt: skip
    return analysis.model_copy(update={"notes": [*analysis.notes, *notes]}) if notes else analysis


def _repeat_ids(store: Path | None, result: TrialResult) -> list[str]:
    """The ids of the undisturbed, successful repeats of ``result``'s configuration in its sweep (itself included
    where undisturbed); none for a trial run outside ``--repeats``."""
    from edgebench.measure.repeats import group_key
    from edgebench.store import Store

    if result.repeat is None or result.sweep is None:
        return []
    with Store(store) as db:
        stored = db.query(sweep_id=result.sweep.sweep_id)
    mine = group_key(result)
    return [t.trial_id for t in stored if t.ok and t.repeat is not None and group_key(t) == mine
            and not disturbances(t) and t.trace_summary is not None]  # fmt: skip


def _device_label(result: TrialResult) -> str:
    """A device as a row names it, by its identity: its configured name or hostname, ``[replayed TREE]`` for a
    captured device's tree read through ``--sysfs-root`` (another device's constant files, run on this host: never
    the host's own row), and the target where it is not this host."""
    device = result.device
    label = device.device_name or device.hostname or "?"
    if device.replayed:
        label += f" [replayed {device.tree}]"
    if result.target and result.target != "local":
        label += f" ({result.target})"
    return label


def _this_device(result: TrialResult, target: str | None) -> bool:
    """Whether ``result`` ran on the device partitioned: this host with its own sensors (``local``; a trial read
    through a copied tree, ``--sysfs-root``, is another device's, never this one's), or the named target as it is
    configured (its trials all read what its ``sysfs_root`` says)."""
    if target is None or target == "local":
        return (
            result.target == "local" and result.device.hostname == socket.gethostname() and not result.device.replayed
        )
    return result.target == target


def _newest_of_each_device(r: PartitionRequest, wanted: str) -> tuple[dict[str, str], list[str]]:
    """Each device's newest ok undisturbed layer-traced trial of the model (with an energy figure when ranking by
    energy), else its newest disturbed one (the row then says so), and the devices passed over for lack of one."""
    from edgebench.store import Store, default_store_path

    newest: dict[str, str] = {}
    fallback: dict[str, str] = {}
    skipped: list[str] = []
    if Path(r.store or default_store_path()).exists():
        with Store(r.store) as db:
            for t in reversed(db.trials()):
                if t.status != "ok" or t.trace_summary is None or t.trace_summary.granularity != "layers":
                    continue
                if t.trial.mode != r.mode or (r.batch_size is not None and t.trial.batch_size != r.batch_size):
                    continue
                if _trial_key(t) != wanted:
                    continue
                label = _device_label(t)
                has_energy = t.energy.source is not None or (
                    t.estimated_energy is not None and t.estimated_energy.avg_power_w is not None
                )
                if r.objective == "energy" and not has_energy:
                    if label not in newest and label not in fallback and label not in skipped:
                        skipped.append(label)
                    continue
                if disturbances(t):
                    fallback.setdefault(label, t.trial_id)
                    continue
                newest.setdefault(label, t.trial_id)
    skipped = [label for label in skipped if label not in fallback]
    newest |= {label: trial_id for label, trial_id in fallback.items() if label not in newest}
    if not newest:
        raise UsageError(
            "--table4",
            f"no stored layer-traced {r.mode} trial of {r.model}"
            + (" with an energy figure" if r.objective == "energy" else "")
            + f"; run `edgebench run -m {r.model} --mode {r.mode} --trace layers` on each device (a power sensor, or "
            "--estimate-energy, for energy)",
        )
    return newest, skipped


def _analysis(
    r: PartitionRequest, checked: _Checked, mobile: Traced, cloud: Traced | None, *, sweep: tuple[float, float] | None
) -> PartitionAnalysis:
    """The analysis of one device's trial (its own graph), the server's costs from a speed-up or ``cloud``."""
    from edgebench.partition.costs import build_table

    graph = _graph(mobile[0])
    result = mobile[0]
    speedup = r.cloud_speedup if r.cloud_speedup is not None else (None if cloud else DEFAULT_SPEEDUP)
    table = build_table(graph, "train" if r.mode == "train" else "infer", mobile, cloud_speedup=speedup, cloud=cloud)
    if cloud is None and r.cloud_speedup is None:
        table = _labelled_default(table)
    if r.objective == "energy" and table.energy_source is None:
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
    return _analyze(table, checked.link, r.objective, r.transfer_dtype, sweep, r.depth)


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


def _predicted_table(r: PartitionRequest, model: str, speedup: float | None, cloud: Traced | None) -> CostTable:
    """The device's per-module times predicted from its stored traced trials (``edgebench predict``)."""
    from edgebench.graph.graph_cache import cached_workload_graph
    from edgebench.measure.layers import LayerRow
    from edgebench.partition.costs import build_predicted_table
    from edgebench.predict.step import Predictor
    from edgebench.predict.stored import Selection
    from edgebench.workflows.predict import check_sklearn, input_shape

    shape = input_shape(r.input_shape)
    size = r.batch_size or (1 if r.mode == "infer" else 8)
    check_sklearn()
    predictor = Predictor.from_store(r.store, Selection(mode=r.mode))
    step = predictor.step(model, size, mode=r.mode, input_shape=shape)
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
    interval = (
        step.interval_note
        if step.interval_note
        else f"{int(step.level * 100)}% interval {step.low_ms:.2f}-{step.high_ms:.2f} ms"
    )
    source = (
        f"edgebench predict, from {len(step.learned_from)} traced trials of this device; the step "
        f"{step.step_ms:.2f} ms ({interval})"
    )
    notes = tuple(f"extrapolation: {flag}" for flag in step.extrapolation)
    return build_predicted_table(
        graph, "train" if r.mode == "train" else "infer", rows, other, source=source, cloud_speedup=speedup,
        cloud=cloud, notes=notes,
    )  # fmt: skip


def _labelled_default(table: CostTable) -> CostTable:
    return replace(table, cloud_source=table.cloud_source + " (the default; set --cloud-speedup or --cloud-trial)")


def _newest_trial(
    store: Path | None, model: str, batch_size: int | None, estimate: str | None, mode: str, target: str | None = None
) -> str | None:
    """The newest ok layer-traced trial of ``model`` from the device (this host's own, or ``target``'s), with an
    energy figure when one is asked for: the newest undisturbed one, else the newest disturbed one (the analysis
    then warns that its split decides nothing), so that a busy device does not run a new trial at every call."""
    from edgebench.store import Store, default_store_path

    if not Path(store or default_store_path()).exists():
        return None
    wanted = None
    if estimate is not None:
        from edgebench.config.flags import parse
        from edgebench.measure.estimate import parse_power_model

        model_ = parse("--estimate-energy", estimate, parse_power_model)
        wanted = f"estimated: {model_.describe()}" if model_ else None
    fallback = None
    with Store(store) as db:
        for r in reversed(db.trials()):
            if r.status != "ok" or r.trace_summary is None or r.trace_summary.granularity != "layers":
                continue
            if not _this_device(r, target) or (batch_size is not None and r.trial.batch_size != batch_size):
                continue
            measured = r.energy.source is not None
            estimated = r.estimated_energy.source if r.estimated_energy else None
            if estimate is not None and not measured and estimated != wanted:
                continue  # measured energy serves any request; an estimate only with the same coefficients
            if _trial_key(r) != model:
                continue
            if not disturbances(r):
                return r.trial_id
            fallback = fallback or r.trial_id  # a disturbed trial picks no split silently: its analysis says so
    return fallback


def _run_traced_trial(r: PartitionRequest, notify: Notify) -> str:
    """Run a layer-traced trial of the model here through the launch path and store it; a failed trial is an error
    naming why."""
    from edgebench.backends.model_file import looks_like_file
    from edgebench.config.flags import build
    from edgebench.config.trial import make_trial
    from edgebench.launch.session import Launcher, open_store
    from edgebench.targets import open_target

    size = r.batch_size or (1 if r.mode == "infer" else 8)
    if looks_like_file(r.model):  # a model file: its own batch unless one is asked for, inference
        size = r.batch_size
    values = {"model": r.model, "batch_size": size, "mode": r.mode, "steps": r.steps, "warmup": r.warmup,
              "trace": "layers", "estimate_energy": r.estimate_energy, "infer_steps": max(r.steps, 5)}  # fmt: skip
    if r.estimate_energy:  # the estimate charges the worker's CPU share: the steps last until the ticks resolve it
        values["min_time_s"] = "auto"
    trial = build(make_trial, values, {"estimate_energy": "--estimate-energy", "batch_size": "--batch-size"})
    target = open_target(r.target)  # a bad --target is a one-line error before anything runs
    where = "this device" if r.target in (None, "local") else r.target
    notify(f"no stored layer-traced trial of {r.model} on {where}: running one (batch {size}, {r.steps} steps)")
    db = open_store(r.store)  # checked before the trial runs; a failing write keeps the trial in a rescue file
    assert db is not None
    with db:
        launcher = Launcher(target, store=db)
        with launcher:
            finished = launcher.launch(trial).finished
        launcher.keep(finished)
    if not finished.result.ok:
        raise UsageError("--model", f"the traced trial {finished.result.status}: {finished.result.reason}")
    return finished.trial_id


def _layer_costs(store: Path | None, trial_id: str, flag: str) -> Traced:
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
