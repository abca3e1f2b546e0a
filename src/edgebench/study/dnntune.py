"""DNNTune's observations on deployment (seed 002): what a mobile CPU can run, GPU against CPU, big and little cores,
and its framework finding that int8 inference is much faster than fp32 on the CPU.

Checked the same way as the other studies (:mod:`edgebench.study.decide`).  Its partition finding (the best split
point depends on the network) is not among these checks yet: ``edgebench partition`` answers it per model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgebench.records.result import Stats, TrialResult
from edgebench.study import stats
from edgebench.study.common import gross_energy_per_step_j, measured_energy
from edgebench.study.decide import cannot, evidence, lacks, verdict
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


def _steps(r: TrialResult) -> Stats | None:
    return r.latency.step_ms or r.latency.infer_ms


def _mean_ms(rs: Sequence[TrialResult]) -> stats.Interval | None:
    """Mean step time over every measured step of ``rs`` (one trial's steps or several), with its t interval."""
    s = [_steps(r) for r in rs]
    s = [x for x in s if x is not None and x.n >= 2]
    if not s:
        return None
    n = sum(x.n for x in s)
    mean = sum(x.mean * x.n for x in s) / n
    ss = sum((x.n - 1) * (x.std or 0.0) ** 2 + x.n * (x.mean - mean) ** 2 for x in s)
    half = stats._t(n - 1) * (ss / (n - 1)) ** 0.5 / n**0.5
    return stats.Interval(mean, mean - half, mean + half, n, "mean over every measured step, t interval")


def d1(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D1"]
    infer = [r for r in results if r.trial.mode == "infer" and r.trial.device == "cpu" and r.trial.batch_size == 1]
    parts = []
    for model in (*SMALL, *LARGE):
        rs = [r for r in infer if r.trial.model == model and r.trial.precision == "fp32"]
        found = _mean_ms(rs)
        if found is not None:
            small = model in SMALL
            parts.append(evidence(f"{model} ({'small' if small else 'large'}): CPU inference time, batch 1 (ms)",
                                  found, REAL_TIME_MS, "below" if small else "above", rs))  # fmt: skip
    if not any(p.quantity.split(" ")[0] in SMALL for p in parts) or not any(
        p.quantity.split(" ")[0] in LARGE for p in parts
    ):
        return cannot(ob, "needs batch-1 CPU inference trials of a small (mnist_mlp, rnn_ptb_small) and a large "
                      "model (resnet50, deepspeech...)")  # fmt: skip
    return verdict(ob, parts)


def _ratio(a: Sequence[TrialResult], b: Sequence[TrialResult]) -> stats.Interval | None:
    x, y = _mean_ms(a), _mean_ms(b)
    sa = [_steps(r) for r in a]
    sb = [_steps(r) for r in b]
    if x is None or y is None:
        return None
    sd_a = max((s.std or 0.0) for s in sa if s is not None)
    sd_b = max((s.std or 0.0) for s in sb if s is not None)
    return stats.welch_ratio(x.estimate, sd_a, x.n, y.estimate, sd_b, y.n)


def d2(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D2"]
    gpu = [r for r in results if r.trial.device != "cpu"]
    if not gpu:
        return lacks(ob, "cuda", "no trial ran on a GPU")
    parts = []
    for r in gpu:
        cpu = [c for c in results if c.trial.device == "cpu" and (c.trial.model, c.trial.batch_size, c.trial.mode)
               == (r.trial.model, r.trial.batch_size, r.trial.mode)]  # fmt: skip
        found = _ratio(cpu, [r]) if cpu else None
        if found is not None:
            parts.append(evidence(f"{r.trial.model}: CPU / GPU step time", found, 1.0, "above", [r, *cpu]))
    if not parts:
        return cannot(ob, "needs the same configuration on the CPU and the GPU")
    return verdict(ob, parts, how="any")


def d3(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D3"]
    gpu = [r for r in results if r.trial.device != "cpu"]
    if not gpu:
        return lacks(ob, "cuda", "no trial ran on a GPU")
    if not any(measured_energy(r) for r in gpu):
        return lacks(ob, "power", "energy is never decided from the utilization estimate")
    parts = []
    for r in gpu:
        cpu = [c for c in results if c.trial.device == "cpu" and measured_energy(c) and (c.trial.model,
               c.trial.batch_size, c.trial.mode) == (r.trial.model, r.trial.batch_size, r.trial.mode)]  # fmt: skip
        found = _energy_ratio(cpu[-1], r) if cpu and measured_energy(r) else None
        if found is not None:
            parts.append(evidence(f"{r.trial.model}: CPU / GPU energy per step (gross)", found, 1.0, "above",
                                  [r, cpu[-1]]))  # fmt: skip
    if not parts:
        return cannot(ob, "needs the same configuration on the CPU and the GPU, both with measured energy")
    return verdict(ob, parts, how="any")


def _energy_ratio(a: TrialResult, b: TrialResult) -> stats.Interval | None:
    """a's energy per step over b's: each step's energy is its time times the trial's mean measured power, so the
    steps' spread (cv) carries over (the same approximation as the energy fits)."""
    ea, eb = gross_energy_per_step_j(a), gross_energy_per_step_j(b)
    sa, sb = _steps(a), _steps(b)
    if ea is None or eb is None or sa is None or sb is None:
        return None
    return stats.welch_ratio(ea, ea * (sa.cv or 0.0), sa.n, eb, eb * (sb.cv or 0.0), sb.n)


def d4(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D4"]
    groups: dict[tuple[str, int, str], list[TrialResult]] = {}
    for r in results:
        groups.setdefault((r.trial.model, r.trial.batch_size, r.trial.mode), []).append(r)
    parts = []
    for rs in groups.values():
        sized = sorted(rs, key=lambda r: len(r.trial.cores) if r.trial.cores is not None else 1 << 16)
        big, every = sized[0], sized[-1]
        if big.trial.cores is None or big.trial.cores == every.trial.cores:
            continue
        found = _ratio([every], [big])
        if found is not None:
            parts.append(evidence(f"{big.trial.model} b{big.trial.batch_size}: step time on every core / on the big "
                                  f"cluster (cpu{','.join(map(str, big.trial.cores))})", found, BENEFIT, "above",
                                  [every, big]))  # fmt: skip
    if not parts:
        return lacks(ob, "clusters", "no trial on the big cluster beside one on every core")
    return verdict(ob, parts, how="any")


def d5(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D5"]
    q = [r for r in results if r.trial.precision == "int8"]
    if not q:
        return lacks(ob, "int8", "no int8 trial ran")
    parts = []
    for r in q:
        same = (r.trial.model, r.trial.batch_size, r.trial.mode, r.trial.backend)
        fp = [c for c in results if c.trial.precision == "fp32" and same == (c.trial.model, c.trial.batch_size,
              c.trial.mode, c.trial.backend)]  # fmt: skip
        found = _ratio(fp, [r]) if fp else None
        if found is not None:
            name = f"{r.trial.model} b{r.trial.batch_size} {r.trial.backend}"
            parts.append(evidence(f"{name}: fp32 / int8 step time", found, MUCH_FASTER, "above", [r, *fp]))
    if not parts:
        return cannot(ob, "needs an fp32 trial beside each int8 one")
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
    where the device has two clusters; a layer-traced MobileNetV2 for the partition findings."""
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
