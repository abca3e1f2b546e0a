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
from edgebench.study.decide import cannot, evidence, lacks, verdict
from edgebench.study.plan import StudyPlan
from edgebench.study.records import Observation, Verdict

STUDY = "dnntune"
TITLE = "Deploying DNNs on mobile devices: DNNTune's observations"
SOURCE = "DNNTune, layer-wise benchmarking and mobile-cloud partitioning (seed 002)"


def _obs(id: str, title: str, words: str, figure: str, published: str, *needs: str) -> Observation:
    return Observation(study=STUDY, id=id, title=title, words=words, figure=figure, published=published, needs=needs)


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
        "gpu",
    ),
    _obs(
        "D3",
        "the GPU is more energy-efficient",
        "Mobile GPUs are more energy-efficient than mobile CPUs.",
        "Observation 3",
        "GPU less energy per inference",
        "gpu",
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
        return lacks(ob, "gpu", "no trial ran on a GPU (torch saw no CUDA device here)")
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
        return lacks(ob, "gpu", "no trial ran on a GPU (torch saw no CUDA device here)")
    if not any(r.energy.source for r in results):
        return lacks(ob, "power", "energy is never decided from the utilization estimate")
    return cannot(ob, "needs repeated measured-energy trials on the CPU and the GPU of one configuration")


def d4(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["D4"]
    pinned = {(r.trial.model, r.trial.batch_size): r for r in results if r.trial.cores is not None}
    every = [r for r in results if r.trial.cores is None]
    parts = []
    for r in every:
        b = pinned.get((r.trial.model, r.trial.batch_size))
        if b is None:
            continue
        found = _ratio([r], [b])
        if found is not None:
            parts.append(evidence(f"{r.trial.model} b{r.trial.batch_size}: step time on big+little / on big only",
                                  found, BENEFIT, "above", [r, b]))  # fmt: skip
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
            parts.append(evidence(f"{r.trial.model} b{r.trial.batch_size}: fp32 / int8 step time", found, MUCH_FASTER,
                                  "above", [r, *fp]))  # fmt: skip
    if not parts:
        return cannot(ob, "needs an fp32 trial beside each int8 one")
    return verdict(ob, parts, how="any")


CHECKS = {"D1": d1, "D2": d2, "D3": d3, "D4": d4, "D5": d5}


def check(results: Sequence[TrialResult]) -> list[Verdict]:
    ok = [r for r in results if r.ok]
    return [CHECKS[o.id](ok) for o in OBSERVATIONS]


def plan(facts: Any, *, quick: bool, budget_s: float | None) -> StudyPlan:
    """Batch-1 CPU inference of small and large models; LeNet int8 beside fp32; LeNet training on the big cluster
    beside every core where the device has two clusters."""
    from edgebench.study.plan import Cell, trim

    notes: list[str] = []
    steps = 10 if quick else 30
    large = ("resnet50",) if quick else ("resnet50", "deepspeech")
    cells = [Cell({"model": m, "mode": "infer", "batch_size": 1}, 5.0) for m in (*SMALL, *large)]
    cells += [
        Cell({"model": "lenet", "mode": "infer", "batch_size": 32, "precision": p}, 8.0) for p in ("fp32", "int8")
    ]
    if facts.big_little:
        big = facts.clusters[-1]
        cells.append(Cell({"model": "lenet", "batch_size": 64, "cores": big, "threads": len(big)}, 5.0))
        cells.append(Cell({"model": "lenet", "batch_size": 64}, 5.0))
    else:
        notes.append("one core type: big against big+little (D4) is left out")
    notes.append("no GPU trial is planned unless torch sees a CUDA device (D2, D3)")
    kept = trim(cells, budget_s, notes)
    common = {"steps": steps, "warmup": 2, "infer_steps": 0}
    trials = []
    for c in kept:
        values = {**common, **c.values}
        if values.get("mode") == "infer":
            values.update(infer_steps=steps)
        trials.append(values)
    return StudyPlan(trials, notes, sum(c.cost_s for c in kept))


def _figures() -> dict[str, list[Any]]:
    from edgebench.study import figures as fig

    step = fig.sweep("step_time_ms")
    return {"D1": [step], "D2": [], "D3": [], "D4": [step], "D5": [step]}


FIGURES = _figures()
