"""DNNTune's observations on deployment (seed 002): what a mobile CPU can run, GPU against CPU, big and little cores,
and its framework finding that int8 inference is much faster than fp32 on the CPU.

Checked the same way as the other studies (:mod:`edgebench.study.decide`).  Its partition finding (the best split
point depends on the network) is not among these checks yet: ``edgebench partition`` answers it per model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgebench.records.result import TrialResult
from edgebench.study import stats
from edgebench.study.common import configurations, gross_energy_per_step_j, measured_energy, values
from edgebench.study.decide import cannot, evidence, lacks, too_few_repeats, verdict
from edgebench.study.plan import StudyPlan
from edgebench.study.records import Observation, Verdict, observation_of

STUDY = "dnntune"
TITLE = "Deploying DNNs on mobile devices: DNNTune's observations"
SOURCE = "DNNTune, layer-wise benchmarking and mobile-cloud partitioning (seed 002)"


_obs = observation_of(STUDY)


OBSERVATIONS = (
    _obs(
        "D1",
        "the CPU runs small LSTM/MLP, not large ones or CNNs",
        "Modern mobile CPUs are powerful enough to "
        "process small LSTM/MLP models, but cannot process large LSTM/MLP models and most CNNs unless they are "
        "specifically optimized for mobiles.",
        "Observation 1",
        "small LSTM/MLP within real time on the CPU",
    ),
    _obs(
        "D2",
        "the GPU cuts latency",
        "High-end and mid-end mobile GPUs can significantly reduce the computation "
        "latency than CPUs, while low-end cannot.",
        "Observation 2",
        "GPU faster than CPU on high/mid-end",
        "cuda",
    ),
    _obs(
        "D3",
        "the GPU is more energy-efficient",
        "Mobile GPUs are more energy-efficient than mobile CPUs.",
        "Observation 3",
        "GPU less energy per inference",
        "cuda",
        "power",
    ),
    _obs(
        "D4",
        "big+little cores do not always help",
        "Simultaneously using big and little cores does not always benefit.",
        "Figure 14",
        "big only as fast as or faster than big+little for some thread counts",
        "clusters",
    ),
    _obs(
        "D5",
        "int8 is much faster than fp32 on the CPU",
        "TFLite quantized is the optimal (latency) framework.",
        "Table 5",
        "quantized int8 much faster than fp32 on the CPU",
        "int8",
    ),
    _obs(
        "D6",
        "the best split point depends on the network",
        "The best partition point depends on the network "
        "(latency-first): traverse every point for 3G, 4G and Wi-Fi and choose the minimum.",
        "Table 4",
        "MobileNetV2 split at bottleneck_3_3 beats mobile-only on Wi-Fi",
        "traced",
    ),
    _obs(
        "D7",
        "on 3G the device alone spends least energy",
        "Energy-first on 3G: running the whole model on the device wins.",
        "Table 4",
        "mobile-only wins on 3G for energy",
        "traced",
        "power",
    ),
)
BY_ID = {o.id: o for o in OBSERVATIONS}
#: Milliseconds per inference a model must stay under to be "processed" (interactive use).
REAL_TIME_MS = 100.0
SMALL = ("mnist_mlp", "rnn_ptb_small")
LARGE = ("resnet50", "deepspeech", "vgg16", "inception_v3")
#: "Much faster": fp32 step time at least this many times int8's.
MUCH_FASTER = 1.5
#: "Benefit": big+little's step time below this share of big-only's.
BENEFIT = 0.95


def _mean_ms(rs: Sequence[TrialResult]) -> stats.Interval | None:
    """A configuration's step time over its repeats (each trial's median, each a fresh worker process), with its t
    interval; None with one repeat, which says nothing of the next process."""
    found = stats.mean_interval(values(rs))
    if found is None:
        return None
    return stats.Interval(found.estimate, found.low, found.high, found.n,
                          f"mean of {found.n} repeats' median step times, t interval")  # fmt: skip


def d1(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D1"]
    infer = [r for r in results if r.trial.mode == "infer" and r.trial.device == "cpu" and r.trial.batch_size == 1]
    parts, once = [], []
    for model in (*SMALL, *LARGE):
        rs = [r for r in infer if r.trial.model == model and r.trial.precision == "fp32"]
        found = _mean_ms(rs)
        if found is not None:
            small = model in SMALL
            parts.append(evidence(f"{model} ({'small' if small else 'large'}): CPU inference time, batch 1 (ms)",
                                  found, REAL_TIME_MS, "below" if small else "above", rs))  # fmt: skip
        elif rs:
            once.append(model)
    if not any(p.quantity.split(" ")[0] in SMALL for p in parts) or not any(
        p.quantity.split(" ")[0] in LARGE for p in parts
    ):
        if once:
            return too_few_repeats(ob, [f"one repeat of {', '.join(once)}"])
        return cannot(ob, "needs batch-1 CPU inference trials of a small (mnist_mlp, rnn_ptb_small) and a large "
                      "model (resnet50, deepspeech...)")  # fmt: skip
    return verdict(ob, parts)


def _ratio(a: Sequence[TrialResult], b: Sequence[TrialResult]) -> stats.Interval | None:
    """a's step time over b's, from their repeats (Welch on the log scale); None with one repeat on a side."""
    return stats.ratio_interval(values(a), values(b))


def _same(r: TrialResult) -> tuple[str, int, str]:
    return (r.trial.model, r.trial.batch_size, r.trial.mode)


def d2(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D2"]
    gpu = [g for g in configurations(results) if g[0].trial.device != "cpu"]
    if not gpu:
        return lacks(ob, "cuda", "no trial ran on a GPU")
    parts, paired = [], False
    for g in gpu:
        cpu = [c for c in results if c.trial.device == "cpu" and _same(c) == _same(g[0])]
        paired = paired or bool(cpu)
        found = _ratio(cpu, g) if cpu else None
        if found is not None:
            parts.append(evidence(f"{g[0].trial.model}: CPU / GPU step time", found, 1.0, "above", [*g, *cpu]))
    if not parts:
        return too_few_repeats(ob) if paired else cannot(ob, "needs the same configuration on the CPU and the GPU")
    return verdict(ob, parts, how="any")


def d3(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D3"]
    gpu = [g for g in configurations(results) if g[0].trial.device != "cpu"]
    if not gpu:
        return lacks(ob, "cuda", "no trial ran on a GPU")
    if not any(measured_energy(r) for g in gpu for r in g):
        return lacks(ob, "power", "energy is never decided from the utilization estimate")
    parts, paired = [], False
    for g in gpu:
        cpu = [c for c in results if c.trial.device == "cpu" and measured_energy(c) and _same(c) == _same(g[0])]
        sensed = [r for r in g if measured_energy(r)]
        paired = paired or bool(cpu and sensed)
        found = _energy_ratio(cpu, sensed) if cpu and sensed else None
        if found is not None:
            parts.append(evidence(f"{g[0].trial.model}: CPU / GPU energy per step (gross)", found, 1.0, "above",
                                  [*sensed, *cpu]))  # fmt: skip
    if not parts:
        if paired:
            return too_few_repeats(ob)
        return cannot(ob, "needs the same configuration on the CPU and the GPU, both with measured energy")
    return verdict(ob, parts, how="any")


def _energy_ratio(a: Sequence[TrialResult], b: Sequence[TrialResult]) -> stats.Interval | None:
    """a's whole-system energy per step over b's, from their repeats (each trial's gross measured energy per step)."""
    return stats.ratio_interval(values(a, gross_energy_per_step_j), values(b, gross_energy_per_step_j),
                                "gross energy per step")  # fmt: skip


def d4(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D4"]
    groups: dict[tuple[str, int, str], list[list[TrialResult]]] = {}
    for g in configurations(results):
        groups.setdefault(_same(g[0]), []).append(g)
    parts, paired = [], False
    for gs in groups.values():
        sized = sorted(gs, key=lambda g: len(g[0].trial.cores) if g[0].trial.cores is not None else 1 << 16)
        big, every = sized[0], sized[-1]
        if big[0].trial.cores is None or big[0].trial.cores == every[0].trial.cores:
            continue
        paired = True
        found = _ratio(every, big)
        if found is not None:
            t = big[0].trial
            parts.append(evidence(f"{t.model} b{t.batch_size}: step time on every core / on the big cluster "
                                  f"(cpu{','.join(map(str, t.cores or ()))})", found, BENEFIT, "above",
                                  [*every, *big]))  # fmt: skip
    if not parts:
        return too_few_repeats(ob) if paired else lacks(ob, "clusters", "no trial on the big cluster beside one on "
                                                                        "every core")  # fmt: skip
    return verdict(ob, parts, how="any")


def d5(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D5"]
    q = [g for g in configurations(results) if g[0].trial.precision == "int8"]
    if not q:
        return lacks(ob, "int8", "no int8 trial ran")
    parts, paired = [], False
    for g in q:
        t = g[0].trial
        same = (t.model, t.batch_size, t.mode, t.backend)
        fp = [c for c in results if c.trial.precision == "fp32" and same == (c.trial.model, c.trial.batch_size,
              c.trial.mode, c.trial.backend)]  # fmt: skip
        paired = paired or bool(fp)
        found = _ratio(fp, g) if fp else None
        if found is not None:
            name = f"{t.model} b{t.batch_size} {t.backend}"
            parts.append(evidence(f"{name}: fp32 / int8 step time", found, MUCH_FASTER, "above", [*g, *fp]))
    if not parts:
        return too_few_repeats(ob) if paired else cannot(ob, "needs an fp32 trial beside each int8 one")
    return verdict(ob, parts, how="any")


def _partition(ob: Observation, results: Sequence[TrialResult], store: Any, objective: str) -> Verdict | Any:
    from edgebench.study import partition

    r = partition.traced(results)
    if r is None:
        return lacks(ob, "traced", "no layer-traced inference trial ran")
    if store is None:
        return cannot(ob, "the layer trace is read from the store; this run kept none (--no-store)")
    if objective == "energy" and r.energy.source is None:
        return lacks(ob, "power", "the device's per-layer energy needs measured power (an estimate never decides)")
    found = partition.analyses(r, store, objective)
    if not found:
        return lacks(ob, "power", "the traced trial has no measured per-layer energy")
    return r, found


PARTITION_NOTE = (
    "server: the device's layer times / 10 (the analyzer's default); links: the published profiles (Neurosurgeon's "
    "uplinks, Huang et al.'s radio power); `edgebench partition` shows every point"
)


def d6(results: Sequence[TrialResult], store: Any = None) -> Verdict:
    from edgebench.study import partition

    ob = BY_ID["D6"]
    got = _partition(ob, results, store, "latency")
    if isinstance(got, Verdict):
        return got
    r, found = got
    picks = "; ".join(f"{n}: {a.best.layer} ({a.best.kind}, {a.best.total_ms:.1f} ms)" for n, a in found.items())
    cost = partition.switching_cost(found, r, "latency")
    if cost is None:
        steps = r.latency.step_ms or r.latency.infer_ms
        same = stats.Interval(0.0, 0.0, 0.0, steps.n if steps else 0, "the same point is best on every network")
        e = evidence("latency lost by using one network's best split on another (ms)", same, 0.0, "above", [r])
    else:
        interval, which = cost
        e = evidence(f"latency lost by using {which} (ms)", interval, 0.0, "above", [r])
    return verdict(ob, [e], notes=[f"best split, latency-first: {picks}", PARTITION_NOTE])


def d7(results: Sequence[TrialResult], store: Any = None) -> Verdict:
    from edgebench.study import partition

    ob = BY_ID["D7"]
    got = _partition(ob, results, store, "energy")
    if isinstance(got, Verdict):
        return got
    r, found = got
    a = found["3g"]
    rivals = [row for row in a.rows if row.point != a.mobile_only.point and row.total_energy_j is not None]
    rival = min(rivals, key=lambda row: row.total_energy_j)
    device = (rival.mobile_energy_j or 0.0) + (a.mobile_only.mobile_energy_j or 0.0)
    i = partition.bounded(rival.total_energy_j - (a.mobile_only.total_energy_j or 0.0), device, r)
    e = evidence(f"3G device energy of the best split ({rival.layer}) less mobile-only's (J)", i, 0.0, "above", [r])
    return verdict(ob, [e], notes=[PARTITION_NOTE])


CHECKS = {"D1": d1, "D2": d2, "D3": d3, "D4": d4, "D5": d5}
STORED_CHECKS = {"D6": d6, "D7": d7}


def check(results: Sequence[TrialResult], store: Any = None) -> list[Verdict]:
    """Every observation's verdict; the partition ones read the layer trace from ``store``."""
    ok = [r for r in results if r.ok]
    return [CHECKS[o.id](ok) if o.id in CHECKS else STORED_CHECKS[o.id](ok, store) for o in OBSERVATIONS]


def plan(facts: Any, *, quick: bool, budget_s: float | None) -> StudyPlan:
    """Batch-1 CPU inference of small and large models; LeNet int8 beside fp32 on torch (``quick``) or on every
    runtime installed (DNNTune's Table 5 compares frameworks); LeNet training on the big cluster beside every core
    where the device has two clusters; a layer-traced MobileNetV2 for the partition findings.  Each configuration
    runs two (``quick``) or three repeats, each a fresh worker process, but the traced one."""
    from edgebench.study.plan import Cell, trim

    notes: list[str] = []
    steps = 10 if quick else 30
    large = ("resnet50",) if quick else ("resnet50", "deepspeech")
    cells = [Cell({"model": m, "mode": "infer", "batch_size": 1}, 5.0) for m in (*SMALL, *large)]
    runtimes = ("torch",) if quick else facts.runtimes
    cells += [Cell({"model": "lenet", "mode": "infer", "batch_size": 32, "precision": p, "backend": b}, 8.0)
              for b in runtimes for p in ("fp32", "int8")]  # fmt: skip
    if quick and len(facts.runtimes) > 1:
        notes.append(f"--quick compares int8 with fp32 on torch only; without it, on {', '.join(facts.runtimes)}")
    if facts.big_little:
        big = facts.clusters[-1]
        cells.append(Cell({"model": "lenet", "batch_size": 64, "cores": big, "threads": len(big)}, 5.0))
        cells.append(Cell({"model": "lenet", "batch_size": 64}, 5.0))
    else:
        notes.append("one core type: big against big+little (D4) is left out")
    if facts.cuda:  # the same batch-1 inference on the GPU beside the CPU's
        cells += [Cell({"model": m, "mode": "infer", "batch_size": 1, "device": "cuda"}, 8.0) for m in (*SMALL, *large)]
    else:
        notes.append("torch reaches no CUDA GPU here: GPU against CPU (D2, D3) is left out")
    cells.append(Cell({"model": "mobilenet_v2", "mode": "infer", "batch_size": 1, "trace": "layers"}, 15.0))
    repeats = 2 if quick else 3  # the means (D1) and ratios (D2-D5) are taken over repeats
    traced = cells.pop()  # the partition's layer trace: one trial (its analysis reads the spans of one process)
    cells = [Cell({**c.values, "repeats": repeats}, c.cost_s * repeats) for c in cells] + [traced]
    kept = trim(cells, budget_s, notes)
    common = {"steps": steps, "warmup": 2, "infer_steps": 0}
    trials = []
    for c in kept:
        values = c.trial_values(common)
        if values.get("mode") == "infer":
            values.update(infer_steps=steps)
        trials.append(values)
    return StudyPlan(trials, notes, sum(c.cost_s for c in kept))


def _figures() -> dict[str, list[Any]]:
    from edgebench.study import figures as fig

    step = fig.sweep("step_time_ms")
    return {"D1": [step], "D2": [], "D3": [], "D4": [step], "D5": [step], "D6": [], "D7": []}


FIGURES = _figures()
