"""The predictor on synthetic devices whose true per-layer costs are known: stored traced trials are built from a
cost function, saved in a real store, and the predictor must give the costs back, flag extrapolation and measure
itself honestly; then once on real traced trials of this machine through the command."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from edgebench.config.sweep_file import load_config
from edgebench.host.sysfs import SysFS
from edgebench.measure.trial import measure
from edgebench.predict.estimate import bootstrap_models, predict
from edgebench.predict.model import fit, select_update_bytes
from edgebench.predict.observations import Config, Graph
from edgebench.predict.step import predicted_step
from edgebench.predict.stored import Selection, load_observations
from edgebench.predict.suggest import choose, suggest, sweep_yaml
from edgebench.predict.validate import leave_one_batch_size_out, leave_one_model_out
from edgebench.records.bundle import TrialBundle
from edgebench.records.events import Done, Ready, Scheduling, Step
from edgebench.records.finished import FinishedTrial
from edgebench.records.spans import BACKWARD, FORWARD, span_table
from edgebench.records.trial import Trial
from edgebench.store import Store
from edgebench.store.trials import save_finished
from edgebench.sweep.plan import plan

MS = 1_000_000
GB = 1e9
#: The synthetic device: ms per GFLOP, per GB moved and per call, forward and backward, by layer type.
TRUE = {
    ("Conv2d", 0): (2.0, 0.5, 0.02),
    ("Conv2d", 1): (4.0, 1.0, 0.03),
    ("Linear", 0): (1.0, 3.0, 0.01),
    ("Linear", 1): (2.5, 3.0, 0.01),
    ("ReLU", 0): (0.0, 5.0, 0.005),
    ("ReLU", 1): (0.0, 6.0, 0.005),
}
OVERHEAD = (0.3, 2.0, 0.05)  # ms: fixed, per GB of optimizer traffic, per million parameters
#: Synthetic models: (type, forward GFLOPs per sample, forward GB per sample) per layer.
MODELS = {
    "net_a": [("Conv2d", 0.020, 0.002), ("ReLU", 0, 0.001), ("Linear", 0.004, 0.001)],
    "net_b": [("Conv2d", 0.050, 0.004), ("ReLU", 0, 0.003), ("Conv2d", 0.030, 0.002), ("Linear", 0.002, 0.0005)],
    "net_c": [("Linear", 0.010, 0.002), ("ReLU", 0, 0.0005), ("Linear", 0.006, 0.001)],
    "net_d": [("Conv2d", 0.010, 0.003), ("ReLU", 0, 0.002), ("Conv2d", 0.080, 0.005), ("ReLU", 0, 0.002)],
    "net_e": [("Conv2d", 0.030, 0.001), ("Linear", 0.020, 0.003), ("ReLU", 0, 0.001), ("Linear", 0.001, 0.0002)],
}
PARAMS = {"net_a": 1e6, "net_b": 3e6, "net_c": 2e6, "net_d": 5e6, "net_e": 4e6}


def true_layer_ms(kind: str, direction: int, gflops: float, gb: float) -> float:
    a, b, c = TRUE[(kind, direction)]
    return a * gflops + b * gb + c


def synthetic_trial(model: str, batch: int, index: int, steps: int = 3, env: dict | None = None) -> FinishedTrial:
    """A layer-traced training trial of ``model`` on the synthetic device, its spans laid out from :data:`TRUE`
    (``env``: the device's environment, by default a host named ``synthetic``)."""
    layers = MODELS[model]
    names = [model.title(), *[f"layer{i}" for i in range(len(layers))]]
    types = [model.title(), *[k for k, _, _ in layers]]
    parents = [-1, *[0] * len(layers)]
    fwd_flops = np.array([0.0, *[f * batch * GB for _, f, _ in layers]])
    fwd_bytes = np.array([0.0, *[b * batch * GB for _, _, b in layers]])
    costs = {"forward_flops": fwd_flops, "backward_flops": 2 * fwd_flops,
             "forward_bytes": fwd_bytes, "backward_bytes": 2 * fwd_bytes}  # fmt: skip
    opt_bytes = PARAMS[model] * 16
    over_ms = OVERHEAD[0] + OVERHEAD[1] * opt_bytes / GB + OVERHEAD[2] * PARAMS[model] / 1e6
    rows, step_events = [], []
    t = 10**12
    for s in range(steps):
        start = t
        fwd = [true_layer_ms(k, 0, fwd_flops[i + 1] / GB, fwd_bytes[i + 1] / GB) for i, (k, _, _) in enumerate(layers)]
        bwd = [true_layer_ms(k, 1, 2 * fwd_flops[i + 1] / GB, 2 * fwd_bytes[i + 1] / GB)
               for i, (k, _, _) in enumerate(layers)]  # fmt: skip
        root_start = t
        for i, ms in enumerate(fwd):
            rows.append((i + 1, FORWARD, t, t + int(ms * MS), 7))
            t += int(ms * MS)
        rows.append((0, FORWARD, root_start, t, 7))
        for i in reversed(range(len(layers))):
            rows.append((i + 1, BACKWARD, t, t + int(bwd[i] * MS), 7))
            t += int(bwd[i] * MS)
        t += int(over_ms * MS)
        step_events.append(Step(phase="train", index=s, start_ns=start, end_ns=t, loss=1.0))
    spans = span_table("layers", names, types, parents, rows, costs=costs,
                       notes={"unattributed_costs": {"forward_flops": 0.0, "backward_flops": 0.0,
                                                     "forward_bytes": 0.0, "backward_bytes": opt_bytes}})  # fmt: skip
    window_s = (t - 10**12) / 1e9  # a quiet device: its one thread never waited for a CPU
    quiet = Scheduling(on_cpu_s=window_s, run_queue_wait_s=0.0, involuntary_switches=0, threads=1, window_s=window_s)
    bundle = TrialBundle(
        trial=Trial(model=model, batch_size=batch, steps=steps, threads=1, cores=(0,), trace="layers"),
        events=[Ready(pid=7), *step_events, Done(stopped_by="fixed", train_sched=quiet)],
        spans_json=spans.to_json(),
        env=env or {"hostname": "synthetic"},
    )
    result = measure(bundle, f"20260101-000000-{index:08x}")
    result = result.model_copy(update={"workload": result.workload.model_copy(update={"params": int(PARAMS[model])})})
    return FinishedTrial.from_bundle(result, bundle)


@pytest.fixture
def synthetic_store(tmp_path: Path) -> Path:
    path = tmp_path / "synthetic.sqlite"
    with Store(path) as store:
        i = 0
        for model in MODELS:
            for batch in (2, 8, 32):
                save_finished(store, synthetic_trial(model, batch, i))
                i += 1
    return path


def graph(model: str, batch: int, kinds: list[tuple[str, float, float]] | None = None) -> Graph:
    layers = kinds or MODELS[model]
    flops = np.array([[0.0, 0.0], *[[f * batch * GB, 2 * f * batch * GB] for _, f, _ in layers]])
    moved = np.array([[0.0, 0.0], *[[b * batch * GB, 2 * b * batch * GB] for _, _, b in layers]])
    return Graph(
        config=Config(model, batch, threads=1),
        types=(model.title(), *[k for k, _, _ in layers]),
        flops=flops,
        bytes=moved,
        calls=np.ones(len(layers) + 1),
        unattributed_bytes=PARAMS.get(model, 2e6) * 16,
        params=int(PARAMS.get(model, 2e6)),
    )


def true_step_ms(model: str, batch: int, layers: list[tuple[str, float, float]] | None = None) -> float:
    total = 0.0
    for kind, f, b in layers or MODELS[model]:
        total += true_layer_ms(kind, 0, f * batch, b * batch) + true_layer_ms(kind, 1, 2 * f * batch, 2 * b * batch)
    params = PARAMS.get(model, 2e6)
    return total + OVERHEAD[0] + OVERHEAD[1] * params * 16 / GB + OVERHEAD[2] * params / 1e6


def test_the_stored_trials_read_back_with_their_measured_layer_times(synthetic_store):
    observations, skipped = load_observations(synthetic_store, Selection())
    assert len(observations) == 15 and skipped == []
    obs = next(o for o in observations if o.graph.config.model == "net_a" and o.graph.config.batch_size == 8)
    assert obs.layer_ms[1, 0] == pytest.approx(true_layer_ms("Conv2d", 0, 0.16, 0.016), rel=1e-6)
    assert obs.step_ms == pytest.approx(true_step_ms("net_a", 8), rel=1e-6)
    assert obs.overhead_ms == pytest.approx(OVERHEAD[0] + OVERHEAD[1] * 0.016 + OVERHEAD[2], rel=1e-5)


def test_the_predictor_recovers_the_true_per_layer_costs(synthetic_store):
    observations, _ = load_observations(synthetic_store, Selection())
    model = fit(observations)
    for kind in ("Conv2d", "Linear", "ReLU"):
        # Each type's own model gives each of its stored layers' true time back, forward and backward, at batch
        # sizes never stored (4 and 16; 2, 8 and 32 are).
        for f, b in {(f, b) for layers in MODELS.values() for k, f, b in layers if k == kind}:
            for batch in (4, 16):
                probe = graph("probe", batch, [(kind, f, b)])
                per_label, unseen = model.label_ms(probe)
                truth = [true_layer_ms(kind, d, (1 + d) * f * batch, (1 + d) * b * batch) for d in (0, 1)]
                assert per_label[1] == pytest.approx(truth, rel=1e-3), (kind, f, b, batch)
                assert model.learned_by(kind) == "own"
    # A configuration never stored: the true step, and no extrapolation flagged inside the stored range.
    unseen = [("Conv2d", 0.040, 0.003), ("ReLU", 0, 0.002), ("Linear", 0.008, 0.002)]
    p = predict(graph("net_new", 16, unseen), observations)
    # Only the new root module's own type is new: the model of the other models' blocks (their roots) gives it
    # their own time, 0, the truth.
    assert p.point.unseen_types == [] and p.point.unseen_share == 0.0
    assert p.point.step_ms == pytest.approx(true_step_ms("net_new", 16, unseen), rel=0.01)
    assert p.low_ms <= p.point.step_ms <= p.high_ms
    assert [f for f in p.extrapolation if "batch size" in f or "GFLOPs" in f] == []
    assert any("net_new has no stored trial" in f for f in p.extrapolation)


def test_extrapolation_is_flagged(synthetic_store):
    observations, _ = load_observations(synthetic_store, Selection())
    layers = [("Conv2d", 0.040, 0.003), ("LSTM", 0.030, 0.004)]
    p = predict(graph("net_a", 256, layers), observations)
    flags = " | ".join(p.extrapolation)
    assert "batch size 256 outside the stored 2-32" in flags
    assert "layer types fewer than 2 stored trials had (LSTM)" in flags  # net_a's root: learned (it takes 0)
    assert "GFLOPs per step, outside the stored" in flags
    assert p.point.unseen_types == ["LSTM"] and 0 < p.point.unseen_share < 1
    assert p.nearest.batch_size == 32 and p.nearest.log2_flops_ratio > 2  # the biggest stored step, far below


def test_validation_holds_each_model_and_batch_size_out(synthetic_store):
    observations, _ = load_observations(synthetic_store, Selection())
    lomo = leave_one_model_out(observations)
    assert len(lomo.rows) == 15 and set(lomo.model_errors()) == set(MODELS)
    assert lomo.median_abs_error() == pytest.approx(0.0, abs=0.01)  # the device is exactly what the models say
    assert lomo.share_within(0.10) == 1.0
    lobo = leave_one_batch_size_out(observations)
    assert {r.batch_size for r in lobo.rows} == {2, 8, 32} and lobo.share_within(0.20) == 1.0


def test_an_error_is_measured_not_assumed(synthetic_store):
    """A trial unlike the cost models (its stored FLOPs and bytes halved: the models see half its layers' work)
    shows up as that model's error, the largest of all."""
    MODELS["net_slow"] = [("Linear", 0.010, 0.002)]
    PARAMS["net_slow"] = 1e6
    try:
        trial = synthetic_trial("net_slow", 4, 100)
    finally:
        MODELS.pop("net_slow")
        PARAMS.pop("net_slow")
    spans = trial.spans
    assert spans is not None and spans.costs is not None
    doctored = type(spans)(**{**spans.__dict__, "costs": {k: v / 2 for k, v in spans.costs.items()}})
    with Store(synthetic_store) as store:
        save_finished(store, trial.model_copy(update={"spans_json": doctored.to_json()}))
    observations, _ = load_observations(synthetic_store, Selection())
    errors = leave_one_model_out(observations).model_errors()
    assert errors["net_slow"] < -0.15  # predicted from half the layers' work: well under what was measured
    assert max(errors, key=lambda m: abs(errors[m])) == "net_slow"  # the others only learn from it, a little off


def test_no_traced_trials_is_a_usage_error(tmp_path):
    from edgebench.errors import UsageError

    with Store(tmp_path / "empty.sqlite"):
        pass
    with pytest.raises(UsageError, match="--trace layers"):
        load_observations(tmp_path / "empty.sqlite", Selection())


def test_a_trial_that_shared_its_core_counts_its_cpu_time_and_the_quietest_repeat_is_kept(tmp_path):
    """Others held half the worker's core: its wall time is twice the work's; the predictor learns the CPU time
    (wall x share) and, of two trials of one configuration, the one whose worker had more of its core."""
    base = synthetic_trial("net_a", 8, 300)
    truth = true_step_ms("net_a", 8)

    def with_share(trial: FinishedTrial, pct: float, index: int) -> FinishedTrial:
        result = trial.result
        cpu = result.cpu.model_copy(update={"process_pct": pct})
        return trial.model_copy(update={"result": result.model_copy(update={"cpu": cpu, "trial_id": f"t{index}"})})

    path = tmp_path / "shared.sqlite"
    with Store(path) as store:
        save_finished(store, with_share(base, 50.0, 1))
    (obs,), _ = load_observations(path, Selection())
    assert obs.cpu_share == 0.5 and obs.wall_step_ms == pytest.approx(truth, rel=1e-6)
    assert obs.step_ms == pytest.approx(truth / 2, rel=1e-6)
    assert obs.layer_ms.sum() + obs.overhead_ms == pytest.approx(truth / 2, rel=1e-6)
    with Store(path) as store:
        save_finished(store, with_share(base, 100.0, 2))
    (kept,), notes = load_observations(path, Selection())
    assert kept.trial_id == "t2" and kept.step_ms == pytest.approx(truth, rel=1e-6)
    assert notes == [
        "1 repeated trial(s) of 1 configuration(s): each configuration's least disturbed trial is learned from "
        "(its worker had the largest share of its core)"
    ]


def test_suggestions_follow_the_uncertainty_shared_with_what_was_asked():
    """Candidate 1 is wide but unrelated to the asked configuration; candidate 0 narrower but moves with it:
    measuring 0 teaches more about what was asked, and once it is measured the rest teaches less."""
    asked, related, wide = 0, 1, 2
    s = np.zeros((3, 3))
    s[asked, asked], s[related, related], s[wide, wide] = 1.0, 0.8, 5.0
    s[asked, related] = s[related, asked] = 0.8
    picks = choose(s, asked=1, n=2, noise=0.1)
    assert [p[0] for p in picks] == [0, 1]  # candidate indices (after the asked ones)
    first_removes, first_left = picks[0][1], picks[0][2]
    assert first_removes == pytest.approx(0.8**2 / (0.8 + 0.1)) and first_left == pytest.approx(1 - first_removes)
    assert picks[1][1] == pytest.approx(0.0, abs=1e-12)  # unrelated: removes nothing


def test_suggest_on_a_noisy_synthetic_device_writes_a_sweep_that_plans(synthetic_store):
    """Stored trials with timing noise: the model asked about (net_b beyond its stored batch sizes) is best
    narrowed by measuring net_b nearer there, then a model sharing its layer types; the file plans with the
    sweep machinery to exactly the suggested layer-traced trials."""
    observations, _ = load_observations(synthetic_store, Selection())
    rng = np.random.default_rng(1)
    noisy = []
    for o in observations:
        layer_ms = o.layer_ms * rng.lognormal(0.0, 0.15, o.layer_ms.shape)
        noisy.append(replace(o, layer_ms=layer_ms, step_ms=float(layer_ms.sum() + o.overhead_ms)))
    asked = [graph("net_b", 128)]
    candidates = [graph(m, 64) for m in ("net_b", "net_c", "net_d", "net_e")] + [graph("net_a", 1)]
    picks = suggest(asked, candidates, fit(noisy), bootstrap_models(noisy), noisy, 3)
    assert [(p.config.model, p.config.batch_size) for p in picks][:2] == [("net_b", 64), ("net_d", 64)]
    assert all(p.removes > 0 for p in picks) and picks[-1].left < picks[0].left < 1.0
    # The synthetic models are named after zoo models for the sweep file (its entries must be registered models).
    zoo = {"net_b": "squeezenet", "net_d": "mobilenet_v2", "net_e": "alexnet", "net_c": "lenet", "net_a": "dqn"}
    renamed = [replace(p, config=replace(p.config, model=zoo[p.config.model])) for p in picks]
    text = sweep_yaml(renamed, [asked[0].config], target="local", steps=5, warmup=1)
    path = Path(tempfile.mkdtemp()) / "suggest.yaml"
    path.write_text(text)
    planned = plan(load_config(path).config, source=path, sysfs=SysFS("/nonexistent"), allowed=(0, 1))
    got = [(t.trial.model, t.trial.batch_size, t.trial.threads, t.trial.trace) for t in planned.trials]
    assert got == [(zoo[p.config.model], p.config.batch_size, 1, "layers") for p in picks]


def test_a_predicted_step_is_labelled_and_adds_up(synthetic_store):
    observations, _ = load_observations(synthetic_store, Selection())
    model = fit(observations)
    step = predicted_step(predict(graph("net_b", 16), observations, model=model), model)
    assert step.basis == "predicted" and step.low_ms <= step.step_ms <= step.high_ms
    assert sum(layer.forward_ms + layer.backward_ms for layer in step.layers) + step.overhead_ms == pytest.approx(
        step.step_ms
    )
    assert step.step_ms == pytest.approx(true_step_ms("net_b", 16), rel=0.01)
    assert {layer.learned_by for layer in step.layers if layer.type == "Conv2d"} == {"own"}
    assert len(step.learned_from) == 15


def untraced_trial(model: str, batch: int, step_ms: float, index: int, steps: int = 3) -> FinishedTrial:
    """An untraced trial of ``model`` on the synthetic device: only its steps, each ``step_ms`` long."""
    t, events = 10**12, []
    for s in range(steps):
        events.append(Step(phase="train", index=s, start_ns=t, end_ns=t + int(step_ms * MS), loss=1.0))
        t += int(step_ms * MS)
    bundle = TrialBundle(
        trial=Trial(model=model, batch_size=batch, steps=steps, threads=1, cores=(0,)),
        events=[Ready(pid=7), *events, Done(stopped_by="fixed")],
        env={"hostname": "synthetic"},
    )
    return FinishedTrial.from_bundle(measure(bundle, f"20260101-000001-{index:08x}"), bundle)


def test_the_tracers_cost_per_call_is_calibrated_from_untraced_twins(synthetic_store):
    """Untraced trials of two traced configurations, each 0.05 ms per module call faster: the tracer's cost per
    call comes back, and an untraced step is the traced prediction less it; without a twin nothing is assumed."""
    from edgebench.predict.step import Predictor

    observations, _ = load_observations(synthetic_store, Selection())
    assert Predictor.from_store(synthetic_store).hooks is None
    calls = {o.graph.config.model: float(o.graph.calls.sum()) for o in observations}
    with Store(synthetic_store) as store:
        for i, (model, batch) in enumerate([("net_a", 8), ("net_b", 32)]):
            untraced = true_step_ms(model, batch) - 0.05 * calls[model]
            save_finished(store, untraced_trial(model, batch, untraced, i))
    predictor = Predictor.from_store(synthetic_store)
    assert predictor.hooks is not None and predictor.hooks.pairs == 2
    assert predictor.hooks.per_call_ms == pytest.approx(0.05, rel=1e-3)
    g = graph("net_c", 16)
    step = predicted_step(predictor.prediction(g), predictor.model, predictor.hooks)
    assert step.untraced_step_ms == pytest.approx(step.step_ms - 0.05 * g.calls.sum(), rel=1e-6)


def kernel_observation(model: str, batch: int, layers: list[tuple[str, str, float]], numels: tuple[int, ...]):
    """A traced training trial on a device whose ``Conv2d`` cost depends on its kernel (``Slow2d`` four times
    the ms per GFLOP of ``Mkldnn``) and whose optimizer update costs 0.05 ms per parameter tensor and streams
    tensors over 4 MiB (12 bytes per element moved per op) at five times the cached rate: ``layers`` are (type,
    kernel, forward GFLOPs per sample)."""
    from edgebench.predict.observations import Observation

    rate = {"Slow2d": 8.0, "Mkldnn": 2.0, "": 1.0}  # ms per GFLOP forward; backward: twice the work and time
    flops = np.array([[f * batch * GB, 2 * f * batch * GB] for _, _, f in layers])
    layer_ms = np.array([[rate[k] * f * batch, 2 * rate[k] * f * batch] for _, k, f in layers])
    total = sum(numels)
    streamed = sum(n for n in numels if 12 * n > 4 * 1024**2)
    update_bytes = 32.0 * total
    over = 0.05 * len(numels) + update_bytes / GB * (1.0 * (total - streamed) + 5.0 * streamed) / total
    g = Graph(
        config=Config(model, batch, threads=1),
        types=tuple(t for t, _, _ in layers),
        flops=flops,
        bytes=np.zeros_like(flops),
        calls=np.zeros(len(layers)),
        unattributed_bytes=update_bytes,
        params=total,
        kernels=tuple(k for _, k, _ in layers),
        param_numels=numels,
    )
    step = float(layer_ms.sum()) + over
    return Observation(f"{model}-{batch}", g, layer_ms, step, over)


#: Synthetic models of the kernel device: a 1x1 convolution runs on ``Slow2d`` below batch 16, as PyTorch does.
KERNEL_MODELS = {
    "k_a": ([("Conv2d", "1x1", 0.02), ("Conv2d", "Mkldnn", 0.03), ("Linear", "", 0.01)], (200_000, 3_000_000)),
    "k_b": ([("Conv2d", "1x1", 0.05), ("Linear", "", 0.002)], (50_000, 60_000, 70_000)),
    "k_c": ([("Conv2d", "Mkldnn", 0.04), ("Conv2d", "1x1", 0.01), ("Linear", "", 0.02)], (20_000_000, 100_000)),
    "k_d": ([("Conv2d", "Mkldnn", 0.02), ("Linear", "", 0.005)], (400_000, 500_000, 1_000_000)),
}


def resolve(layers: list[tuple[str, str, float]], batch: int) -> list[tuple[str, str, float]]:
    """A ``1x1`` layer's kernel at ``batch``: ``Slow2d`` under 16, else ``Mkldnn`` (PyTorch's rule, one thread)."""
    return [(t, ("Slow2d" if batch < 16 else "Mkldnn") if k == "1x1" else k, f) for t, k, f in layers]


def kernel_observations(models: dict) -> list:
    return [
        kernel_observation(name, batch, resolve(layers, batch), numels)
        for name, (layers, numels) in models.items()
        for batch in (4, 8, 16, 32)
    ]


def test_a_convolutions_kernel_and_the_updates_streamed_tensors_are_learned_apart():
    observations = kernel_observations(KERNEL_MODELS)
    # The update's tensors are split at 4 MiB (chosen so from these trials too).
    assert select_update_bytes(observations) == 4 * 1024**2
    model = fit(observations, update_bytes=4 * 1024**2)
    for kind in ("Conv2d/Slow2d", "Conv2d/Mkldnn", "Linear"):
        assert model.learned_by(kind) == "own"
    # A model never stored, at a batch never stored, on both kernels: its true step.
    layers = [("Conv2d", "1x1", 0.03), ("Conv2d", "Mkldnn", 0.01), ("Linear", "", 0.004)]
    for batch in (6, 24):
        new = kernel_observation("k_new", batch, resolve(layers, batch), (10_000_000, 300_000))
        assert model.predict(new.graph).step_ms == pytest.approx(new.step_ms, rel=1e-3)
    # Held out in turn, every model is predicted (its kernels' and its tensors' costs learned from the others).
    lomo = leave_one_model_out(observations)
    assert lomo.median_abs_error() == pytest.approx(0.0, abs=0.01) and lomo.share_within(0.05) == 1.0


def test_without_the_kernel_a_convolutions_cost_is_not_recovered():
    """The same device with the kernels hidden: one Conv2d model for both kernels cannot fit it (the term is
    needed, not decoration)."""
    observations = [replace(o, graph=replace(o.graph, kernels=())) for o in kernel_observations(KERNEL_MODELS)]
    lomo = leave_one_model_out(observations)
    assert lomo.median_abs_error() > 0.05


def plane_observation(model: str, batch: int, layers: list[tuple[int, int]], numels: tuple[int, ...]):
    """A traced training trial on a device whose ``BatchNorm2d`` costs 20 ms per GB plus 20 ns per (sample,
    channel) plane of its input, forward and backward: ``layers`` are (channels, pixels per channel)."""
    from edgebench.predict.observations import Observation

    bytes_ = np.array([[8.0 * batch * c * hw, 16.0 * batch * c * hw] for c, hw in layers])
    planes = np.array([batch * c for c, _ in layers], dtype=float)
    layer_ms = bytes_ / GB * 20.0 + planes[:, None] * 20e-6
    g = Graph(
        config=Config(model, batch, threads=1),
        types=("BatchNorm2d",) * len(layers),
        flops=np.zeros_like(bytes_),
        bytes=bytes_,
        calls=np.ones(len(layers)),
        unattributed_bytes=0.0,
        params=sum(numels),
        param_numels=numels,
        rows=tuple(c for c, _ in layers),
    )
    over = 0.05 * len(numels)
    return Observation(f"{model}-{batch}", g, layer_ms, float(layer_ms.sum()) + over, over)


#: Few channels of big maps (a DenseNet's) against many channels of small ones (a ResNet's at a small input).
PLANE_MODELS = {
    "p_few": ([(24, 1024), (48, 1024), (96, 256)], (24, 24, 48, 48, 96, 96)),
    "p_mid": ([(128, 64), (256, 64), (256, 16)], (128, 128, 256, 256, 256, 256)),
    "p_many": ([(512, 16), (1024, 4), (2048, 1)], (512, 512, 1024, 1024, 2048, 2048)),
    "p_mix": ([(64, 256), (1024, 4)], (64, 64, 1024, 1024)),
}


def test_a_per_channel_kernels_cost_per_plane_is_learned_from_its_input_rows():
    """The same bytes cost more in many small planes: with the input rows the held-out models come back; with
    them hidden (a trial whose layout is not known) one rate per byte cannot fit both kinds of network."""
    observations = [
        plane_observation(name, batch, layers, numels)
        for name, (layers, numels) in PLANE_MODELS.items()
        for batch in (4, 8, 16)
    ]
    lomo = leave_one_model_out(observations)
    assert lomo.median_abs_error() == pytest.approx(0.0, abs=0.01) and lomo.share_within(0.05) == 1.0
    hidden = [replace(o, graph=replace(o.graph, rows=())) for o in observations]
    assert leave_one_model_out(hidden).median_abs_error() > 0.05
    assert select_update_bytes(observations) == float("inf")  # no tensor streams: nothing favours a split


def test_a_batch_this_host_cannot_lay_out_is_refused_before_anything_is_built():
    """Issue 39: ``predict`` at batch 10**9 tried to allocate 3.1 TB."""
    from edgebench.errors import UsageError
    from edgebench.predict.observations import Config, check_batch

    with pytest.raises(UsageError, match="predict at most") as info:
        check_batch(Config("lenet", 10**9))
    assert info.value.field == "--batch-size"
    check_batch(Config("lenet", 4096))


JETSON_TREE = {
    "hostname": "synthetic",
    "sysfs_root": "/work/tests/fixtures/sysfs/jetson_tx2",
    "sensor_source": "replayed",
}


def test_a_replayed_trees_trials_are_another_device_and_never_mix_with_the_hosts_own(synthetic_store):
    """Recorded: `predict` learned energy from a Jetson-tree trial and printed `energy per step: 0 J` for a machine
    with no sensor.  A device is its host and its sensor source: the tree's trials are passed over, by name."""
    from edgebench.errors import UsageError

    with Store(synthetic_store) as store:
        replay = synthetic_trial("net_a", 4, 900, env=JETSON_TREE)
        save_finished(store, replay)
    found, passed = load_observations(synthetic_store, Selection())
    assert {o.device for o in found} == {"synthetic"} and replay.trial_id not in {o.trial_id for o in found}
    assert passed == ["1 trial(s) of synthetic [replayed jetson_tx2]: another device than synthetic"]
    only, _ = load_observations(synthetic_store, Selection(device="synthetic [replayed jetson_tx2]"))
    assert [o.trial_id for o in only] == [replay.trial_id]
    with pytest.raises(UsageError, match=r"no selected trials of 'orin'") as refused:
        load_observations(synthetic_store, Selection(device="orin"))
    assert refused.value.field == "--device"


def test_only_a_replayed_trees_trials_are_not_taken_for_the_host(tmp_path):
    from edgebench.errors import UsageError

    path = tmp_path / "replayed.sqlite"
    with Store(path) as store:
        for i, batch in enumerate((2, 8, 32)):
            save_finished(store, synthetic_trial("net_a", batch, i, env=JETSON_TREE))
    with pytest.raises(UsageError, match=r"only a replayed tree's trials.*synthetic \[replayed jetson_tx2\] \(3\)"):
        load_observations(path, Selection())


def test_a_prediction_from_too_few_trials_says_so_instead_of_a_zero_width_interval(tmp_path):
    """Recorded: `predict` with one traced trial printed `90% interval 1.68-1.68 ms`."""
    from edgebench.report.predict import interval_text, prediction_json

    path = tmp_path / "one.sqlite"
    with Store(path) as store:
        save_finished(store, synthetic_trial("net_a", 8, 0))
    found, _ = load_observations(path, Selection())
    p = predict(graph("net_a", 8), found)
    assert p.interval_note.startswith("no interval: learned from 1 traced trial, and an interval needs 3 or more")
    assert interval_text(p) == p.interval_note and p.high_ms == float("inf")
    doc = prediction_json(p)
    assert doc["interval"] is None and doc["interval_note"] == p.interval_note and doc["basis"] == "predicted"
    json.dumps(doc, allow_nan=False)  # what --json prints is JSON: no infinity


def test_a_prediction_from_enough_trials_has_its_interval(synthetic_store):
    from edgebench.report.predict import prediction_json

    found, _ = load_observations(synthetic_store, Selection())
    p = predict(graph("net_b", 8), found)
    assert p.interval_note is None and p.low_ms < p.point.step_ms < p.high_ms
    doc = prediction_json(p)
    assert doc["interval"] == {"level": 0.9, "low_ms": p.low_ms, "high_ms": p.high_ms} and doc["device"] == "synthetic"


def test_a_disturbed_trial_is_never_learned_from(tmp_path):
    """A trial whose hygiene check failed (a busy device) is left out of the training set, with the reason."""
    from edgebench.records.result import Hygiene

    base = synthetic_trial("net_a", 8, 301)
    busy = base.result.model_copy(update={"trial_id": "busy1", "hygiene": Hygiene(other_cpu_pct=64.0)})
    path = tmp_path / "busy.sqlite"
    with Store(path) as store:
        save_finished(store, base.model_copy(update={"result": busy}))
        save_finished(store, synthetic_trial("net_a", 2, 302))
    observations, notes = load_observations(path, Selection())
    assert [o.trial_id for o in observations] != ["busy1"] and "busy1" not in {o.trial_id for o in observations}
    said = "trial busy1 left out: disturbed (device busy: other processes used 64%"
    assert any(n.startswith(said) for n in notes), notes
