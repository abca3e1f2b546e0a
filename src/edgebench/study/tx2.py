"""The characterization paper's twelve observations about training on a Jetson TX2 (seed 001), as checks.

Each check reads the stored trials of the study's plan and returns a verdict from intervals
(:mod:`edgebench.study.decide`).  Thresholds are stated in the observation's evidence: the paper's words are
qualitative ("much higher", "sensitive", "not in a proportional way"), so each is given the smallest effect the
paper's own figures would clear, and an interval that straddles it is inconclusive.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from edgebench.measure.hygiene import BUSY_OTHER_PCT
from edgebench.records.result import TrialResult
from edgebench.study import stats
from edgebench.study.common import (
    activations_bytes,
    batch_sizes,
    by_model,
    cpu_util,
    cpu_util_source,
    gpu_util,
    gross_energy_per_step_j,
    having,
    is_lstm,
    measured_energy,
    median_step_ms,
    most_common,
)
from edgebench.study.decide import cannot, evidence, lacks, verdict
from edgebench.study.plan import StudyPlan
from edgebench.study.records import Evidence, Observation, Verdict, observation_of

STUDY = "tx2"
TITLE = "Training on a mobile device: the characterization paper's observations (Jetson TX2)"
SOURCE = "the characterization paper of DNN training on the NVIDIA Jetson TX2 (seed 001)"


_obs = observation_of(STUDY)


OBSERVATIONS: tuple[Observation, ...] = (
    _obs(
        "O1",
        "GPU utilization far above CPU's",
        "The GPU utilization is generally much higher than the CPU utilization; when the GPU utilization is high, "
        "the CPU utilization tends to be low, and vice versa.",
        "Figure 3",
        "GPU close to 100% most of the time, each CPU core 0-60%",
        "gpu",
    ),
    _obs(
        "O2",
        "utilization periodic with the step",
        "The utilization of GPU and each core in CPU is predictable: a periodical pattern, one period per "
        "training step.",
        "Figure 3",
        "a repeated busy/less-busy pattern per step on every core and the GPU",
        "utilization",
    ),
    _obs(
        "O3",
        "GPU utilization grows with batch size, CPU's does not",
        "The GPU utilization is sensitive to the batch size, while the CPU utilization is not.",
        "Figure 4",
        "GPU 71.4% -> 84.5% (SqueezeNet), 85.6% -> 95.6% (ResNet50) from batch 4 to 64; CPU 2.1% apart",
        "gpu",
    ),
    _obs(
        "O4",
        "cores differ in utilization",
        "Different cores have different utilization during the training; the two Denver2 cores have the highest "
        "idle ratio (as high as 65%).",
        "Figure 5",
        "per-core utilization differs; Denver2 idle up to 65%",
        "cores",
        "utilization",
    ),
    _obs(
        "O5",
        "LSTM uses the GPU less than CNNs",
        "The GPU utilization varies on different application domains: the LSTM model has a low GPU utilization, "
        "computer-vision models higher (95%).",
        "Figure 4",
        "LSTM low, ResNet 95%",
        "gpu",
        "lstm",
    ),
    _obs(
        "O6",
        "memory can draw more power than the GPU",
        "GPU is a power-consuming component, but for some deep learning model the memory consumes more power than GPU.",
        "Figure 4 (power by component)",
        "memory above GPU when training the LSTM",
        "rails",
    ),
    _obs(
        "O7",
        "power periodic with the step",
        "The power consumption across training steps is predictable: a periodical pattern.",
        "Figure 7",
        "per-component power repeats each step",
        "power",
    ),
    _obs(
        "O8",
        "energy grows with batch size, not proportionally",
        "As we increase the batch size, the energy consumption increases as well, but not in a proportional way.",
        "Figure 6",
        "batch 4 -> 64 (16x): energy 2.2x to 10.5x",
        "power",
    ),
    _obs(
        "O9",
        "intermediate data grow with batch size",
        "Parameters, input data and gradients remain constant as the batch size grows, but the memory of "
        "intermediate data increases significantly.",
        "Figure 9",
        "DenseNet40 intermediate data 2.2 GB -> 5.9 GB from batch 4 to 64",
    ),
    _obs(
        "O10",
        "throughput grows with batch size",
        "Throughput increases as the batch size increases.",
        "Figure 8",
        "ResNet50 9 -> 55 samples/s from batch 4 to 64",
    ),
    _obs(
        "O11",
        "throughput scales differently across models",
        "Across models, throughput changes differently as we increase the batch size.",
        "Figure 8",
        "DRL 15.3x, ResNet50 6.1x, DenseNet 1.7x from batch 4 to 64",
        "models",
    ),
    _obs(
        "O12",
        "training on the device slowly raises accuracy",
        "Training a deep learning model on a mobile device can slowly increase training accuracy.",
        "Figure 10",
        "DenseNet40 60.65% -> 61.32%",
        "accuracy",
    ),
)
BY_ID = {o.id: o for o in OBSERVATIONS}

#: Percentage points by which the GPU's mean utilization must exceed the CPU's to be "much higher".
GPU_OVER_CPU_PP = 10.0
#: Autocorrelation at one step period above which a series repeats with the step (noise gives about 0).
PERIODIC_R = 0.2
#: Percentage points per doubling of the batch size that count as "sensitive" (the paper: ~2.5 for the GPU).
SENSITIVE_PP_PER_DOUBLING = 1.0
#: Percentage points between two cores' utilization that count as "different".
CORE_DIFFERENCE_PP = 5.0
#: Percentage points by which CNNs must use the GPU more than LSTMs.
DOMAIN_PP = 5.0


def _no_gpu(ob: Observation, results: Sequence[TrialResult]) -> Verdict:
    if not any(gpu_util(r) is not None for r in results):
        return lacks(ob, "gpu", "no trial sampled a GPU's utilization")
    return cannot(ob, "no trial measured the CPU's utilization beside the GPU's")


#: Per-core utilization at or above this in every trial: the cores were saturated (by other load too).
SATURATED_PCT = 99.0


def saturated(results: Sequence[TrialResult]) -> str:
    """A reason's tail when every core was busy throughout every trial while other processes used more than the
    hygiene check's busy share of them (their load then hides whatever the training does on its own), else empty:
    a quiet device whose cores the training alone saturates is measured as it is."""
    cores = [v for r in results if r.cpu.util_pct for v in r.cpu.util_pct.per_core if v is not None]
    if not cores or min(cores) < SATURATED_PCT:
        return ""
    other = [r.hygiene.other_cpu_pct for r in results if r.hygiene and r.hygiene.other_cpu_pct is not None]
    if not other or max(other) <= BUSY_OTHER_PCT:
        return ""  # the training alone kept every core busy: that is the finding, not a disturbance
    return (
        f" (every core was {min(cores):.0f}% busy throughout every trial; other processes used {max(other):.0f}% "
        "of the trial's cores: run on a quiet device)"
    )


def o1(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O1"]
    both = [r for r in results if gpu_util(r) is not None and cpu_util(r) is not None]
    if not both:
        return _no_gpu(ob, results)
    diff = stats.paired_difference([gpu_util(r) for r in both], [cpu_util(r) for r in both])  # type: ignore[misc]
    if diff is None:
        return cannot(ob, f"needs two trials with GPU and CPU utilization; {len(both)} have them")
    parts = [evidence(f"GPU less CPU utilization (percentage points per trial; CPU: {cpu_util_source(both)})",
                      diff, GPU_OVER_CPU_PP, "above", both)]  # fmt: skip
    r = stats.correlation([gpu_util(r) for r in both], [cpu_util(r) for r in both])  # type: ignore[misc]
    notes = []
    if r is not None:
        parts.append(evidence("correlation of GPU and CPU utilization across trials (Pearson r)", r, 0.0, "below",
                              both, decides=False, note="the paper's 'when one is high the other is low'"))  # fmt: skip
    else:
        notes.append("GPU against CPU utilization: no correlation (one of them did not vary across the trials)")
    return verdict(ob, parts, notes=notes)


def _periodicity_values(results: Sequence[TrialResult]) -> tuple[list[float], list[TrialResult], list[str | None]]:
    values, used, why = [], [], []
    for r in results:
        p = r.predictability
        known = [v for v in (p.utilization_periodicity or []) if v is not None] if p else []
        values += known
        if known:
            used.append(r)
        why.append(p.periodicity_note if p else "no samples")
    return values, used, why


def o2(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O2"]
    values, used, why = _periodicity_values(results)
    parts: list[Evidence] = []
    notes: list[str] = []
    cpu = stats.fisher_mean(values)
    if cpu is not None:
        parts.append(evidence("CPU cores' utilization autocorrelation at one step period", cpu, PERIODIC_R, "above",
                              used))  # fmt: skip
    gpu_values = [v for r in results if r.series_periodicity and r.series_periodicity.gpu
                  for v in r.series_periodicity.gpu.values() if v is not None]  # fmt: skip
    gpu_used = [r for r in results if r.series_periodicity and r.series_periodicity.gpu
                and any(v is not None for v in r.series_periodicity.gpu.values())]  # fmt: skip
    gpu = stats.fisher_mean(gpu_values)
    if gpu is not None:
        parts.append(evidence("GPU utilization autocorrelation at one step period", gpu, PERIODIC_R, "above",
                              gpu_used))  # fmt: skip
    elif any(gpu_util(r) is not None for r in results):
        gnotes = [r.series_periodicity.note for r in results if r.series_periodicity]
        notes.append("GPU not checked: " + (most_common(gnotes) or "fewer than two series with a pattern"))
    if not parts and not any(r.cpu.util_pct and r.cpu.util_pct.mean is not None for r in results):
        return cannot(ob, "the per-core counters of /proc/stat did not advance during the trials (a copied tree)"
                      + ("; " + notes[0] if notes else ""))  # fmt: skip
    flat = _flat_utilization(results)
    if not parts and len(flat) >= 2 and not saturated(results):
        # a step resolved by the sampler, a quiet device, and every core's utilization constant in every trial:
        # there is no pattern to repeat (a constant series' autocorrelation is undefined, its variation is none)
        none = stats.Interval(0.0, 0.0, 0.0, len(flat), "every sampled interval of every core equal (the series is "
                              "constant: its range is 0 exactly, at the sampler's resolution)")  # fmt: skip
        parts.append(evidence("CPU cores' utilization range within the measured steps (percentage points)", none,
                              FLAT_RANGE_PP, "above", flat))  # fmt: skip
        notes.append("the training kept every core equally busy throughout: nothing in the utilization repeats with "
                     "the step at the sampler's resolution")  # fmt: skip
    if not parts:
        return cannot(ob, "no trial's utilization could be correlated at its step period: "
                      + (most_common(why) or "no samples") + saturated(results))  # fmt: skip
    return verdict(ob, parts, notes=notes)


#: The least movement of utilization a step-periodic pattern needs to show at all (percentage points).
FLAT_RANGE_PP = 1.0


def _flat_utilization(results: Sequence[TrialResult]) -> list[TrialResult]:
    """Trials whose step period the sampler resolved but whose cores' utilization never moved (every core's
    autocorrelation undefined because its series is constant)."""
    return [r for r in results if r.predictability and r.predictability.utilization_periodicity
            and all(v is None for v in r.predictability.utilization_periodicity)
            and "did not vary" in (r.predictability.periodicity_note or "")]  # fmt: skip


def _log2_batches(rs: Sequence[TrialResult]) -> list[float]:
    return [math.log2(r.trial.batch_size) for r in rs]


def o3(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O3"]
    both = [r for r in results if gpu_util(r) is not None and cpu_util(r) is not None]
    if not both:
        return _no_gpu(ob, results)
    if len(batch_sizes(both)) < 2 or len(both) < 3:
        return cannot(ob, f"needs three trials over two batch sizes with a GPU sensor; {len(both)} trials here")
    g = stats.slope(_log2_batches(both), [gpu_util(r) for r in both])  # type: ignore[misc]
    c = stats.slope(_log2_batches(both), [cpu_util(r) for r in both])  # type: ignore[misc]
    assert g is not None and c is not None
    return verdict(ob, [
        evidence("GPU utilization slope (percentage points per doubling of the batch)", g,
                 SENSITIVE_PP_PER_DOUBLING, "above", both),
        evidence(f"CPU utilization slope (percentage points per doubling; {cpu_util_source(both)})", c,
                 SENSITIVE_PP_PER_DOUBLING, "within", both),
    ])  # fmt: skip


def o4(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O4"]
    rows = [r for r in results if r.cpu.util_pct and len(r.cpu.util_pct.per_core) >= 2
            and all(v is not None for v in r.cpu.util_pct.per_core)]  # fmt: skip
    if rows and saturated(rows):
        return cannot(ob, "per-core differences cannot show" + saturated(rows))
    if not rows:
        if any(r.cpu.util_pct and len(r.cpu.util_pct.per_core) >= 2 for r in results):
            return cannot(ob, "the per-core counters of /proc/stat did not advance during the trials (a copied tree)")
        return lacks(ob, "cores", "no trial measured two or more cores")
    widths = {len(r.cpu.util_pct.per_core) for r in rows}  # type: ignore[union-attr]
    width = max(widths)
    rows = [r for r in rows if len(r.cpu.util_pct.per_core) == width]  # type: ignore[union-attr]
    per_core = list(zip(*[r.cpu.util_pct.per_core for r in rows], strict=True))  # type: ignore[union-attr]
    means = [sum(c) / len(c) for c in per_core]  # type: ignore[arg-type]
    order = sorted(range(width), key=lambda i: (means[i], i))
    lo, hi = order[0], order[-1]
    pairs = width * (width - 1) // 2
    level = 1 - 0.05 / pairs  # Bonferroni: the pair is chosen after looking at every pair
    diff = stats.paired_difference(per_core[hi], per_core[lo], level=level)  # type: ignore[arg-type]
    if diff is None:
        return cannot(ob, "needs two trials measuring every core; one here")
    e = evidence(f"utilization of the most used core less the least used (cpu{hi} - cpu{lo}, percentage points)",
                 diff, CORE_DIFFERENCE_PP, "above", rows)  # fmt: skip
    e = e.model_copy(update={"level": level})
    notes = []
    idle = [r.cpu.idle_ratio for r in rows if r.cpu.idle_ratio]
    if idle:
        mean_idle = [sum(v[i] or 0 for v in idle) / len(idle) for i in range(width)]
        top = max(range(width), key=mean_idle.__getitem__)
        notes.append(f"highest idle-state ratio: cpu{top} ({mean_idle[top] * 100:.0f}% of the training time)")
    return verdict(ob, [e], notes=notes)


def o5(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O5"]
    with_gpu = having(results, gpu_util)
    if not with_gpu:
        return lacks(ob, "gpu", "no trial sampled a GPU's utilization")
    lstm = [r for r in with_gpu if is_lstm(r.trial.model)]
    cnn = [r for r in with_gpu if not is_lstm(r.trial.model)]
    if not lstm or not cnn:
        return lacks(ob, "lstm", f"{len(lstm)} LSTM and {len(cnn)} CNN trials with a GPU sensor")
    d = stats.welch_difference([gpu_util(r) for r in cnn], [gpu_util(r) for r in lstm])  # type: ignore[misc]
    if d is None:
        return cannot(ob, "needs two LSTM and two CNN trials with a GPU sensor")
    return verdict(ob, [evidence("CNN less LSTM mean GPU utilization (percentage points)", d, DOMAIN_PP, "above",
                                 [*cnn, *lstm])])  # fmt: skip


def rail_of(r: TrialResult, words: tuple[str, ...]) -> float | None:
    """The mean power of the first rail whose name holds one of ``words`` (``GPU``; ``DDR``, ``MEM``)."""
    for name, rail in (r.energy.by_rail or {}).items():
        if any(w in name.upper() for w in words):
            return rail.avg_power_w
    return None


GPU_RAIL, MEMORY_RAIL = ("GPU",), ("DDR", "MEM", "DRAM")


def o6(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O6"]
    rows = [r for r in results if rail_of(r, GPU_RAIL) is not None and rail_of(r, MEMORY_RAIL) is not None]
    if not rows:
        rails = sorted({n for r in results for n in (r.energy.by_rail or {})})
        return lacks(ob, "rails", f"rails measured: {', '.join(rails)}" if rails else "no power rails measured")
    parts = []
    for model, rs in sorted(by_model(rows).items()):
        d = stats.paired_difference([rail_of(r, MEMORY_RAIL) for r in rs], [rail_of(r, GPU_RAIL) for r in rs])  # type: ignore[misc]
        if d is not None:
            parts.append(evidence(f"{model}: memory less GPU rail power (W)", d, 0.0, "above", rs))
    if not parts:
        return cannot(ob, "needs two trials of a model with GPU and memory rails")
    return verdict(ob, parts, how="any")


def o7(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O7"]
    sensed = [r for r in results if measured_energy(r)]
    if not sensed:
        return lacks(ob, "power", "no trial measured power (an estimate is never used)")
    values = [v for r in sensed if r.series_periodicity and r.series_periodicity.power
              for v in r.series_periodicity.power.values() if v is not None]  # fmt: skip
    used = [r for r in sensed if r.series_periodicity and r.series_periodicity.power
            and any(v is not None for v in r.series_periodicity.power.values())]  # fmt: skip
    found = stats.fisher_mean(values)
    if found is None:
        why = most_common([r.series_periodicity.note for r in sensed if r.series_periodicity])
        return cannot(ob, "the power readings could not be correlated at the step period: "
                      + (why or "fewer than two rail series varied"))  # fmt: skip
    return verdict(ob, [evidence("power rails' autocorrelation at one step period", found, PERIODIC_R, "above",
                                 used)])  # fmt: skip


def energy_fits(results: Sequence[TrialResult]) -> dict[str, tuple[stats.Fit, list[TrialResult]]]:
    """Per model, the OLS slope of log whole-system energy per step on log batch size, one point per trial (each a
    repeat in its own worker process, so the run-to-run spread is in the residuals)."""
    fits = {}
    for model, rs in sorted(by_model(having(results, gross_energy_per_step_j)).items()):
        fit = stats.linear_fit([math.log(r.trial.batch_size) for r in rs],
                               [math.log(gross_energy_per_step_j(r)) for r in rs])  # type: ignore[arg-type]  # fmt: skip
        if fit is not None:
            fits[model] = (fit, rs)
    return fits


def o8(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O8"]
    rows = having(results, gross_energy_per_step_j)
    if not rows:
        return lacks(ob, "power", "energy is never decided from the utilization estimate")
    parts = []
    for model, (fit, rs) in energy_fits(rows).items():
        e = fit.interval(ENERGY_METHOD)
        q = f"{model}: exponent of whole-system energy per step against batch size"
        parts += [evidence(q, e, 0.0, "above", rs), evidence(q, e, 1.0, "below", rs)]
    if not parts:
        return cannot(ob, "needs measured energy at three trials over two batch sizes of one model")
    return verdict(ob, parts, notes=["energy is the gross whole-system energy of the measured steps, as the "
                                     "paper's E; sub-linear (exponent < 1) means energy per sample falls"])  # fmt: skip


#: MiB per sample the intermediate data must grow by (1 KiB: a fixed buffer does not count as growth).
GROWS_MIB = 1 / 1024


def o9(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O9"]
    rows = having(results, activations_bytes)
    parts = []
    for model, rs in sorted(by_model(rows).items()):
        if len(batch_sizes(rs)) < 2 or len(rs) < 3:
            continue
        b = [float(r.trial.batch_size) for r in rs]
        act = stats.slope(b, [activations_bytes(r) / 2**20 for r in rs])  # type: ignore[operator]
        fixed = stats.slope(b, [_fixed_mib(r) for r in rs])
        if act is None or fixed is None:
            continue
        parts.append(evidence(f"{model}: saved activations per sample (MiB per sample, OLS)", act, GROWS_MIB, "above",
                              rs))  # fmt: skip
        parts.append(evidence(f"{model}: parameters + gradients + optimizer state per sample (MiB per sample)",
                              fixed, 0.01, "within", rs))  # fmt: skip
    if not parts:
        return cannot(ob, "needs memory by category at three trials over two batch sizes of one model "
                      f"({len(rows)} trials measured it)")  # fmt: skip
    return verdict(ob, parts)


def _fixed_mib(r: TrialResult) -> float:
    m = r.memory.by_category
    assert m is not None
    return sum(v or 0 for v in (m.params_bytes, m.gradients_bytes, m.optimizer_bytes)) / 2**20


def step_time_fits(results: Sequence[TrialResult]) -> dict[str, tuple[stats.Fit, list[TrialResult]]]:
    """Per model, the OLS slope of log step time (each trial's median) on log batch size, one point per trial: a
    trial is one worker process, a repeat of its configuration, so the process-to-process spread lands in the
    residuals where a fit over every step would have hidden it (the steps of one process share its offset)."""
    fits = {}
    for model, rs in sorted(by_model([r for r in results if median_step_ms(r)]).items()):
        fit = stats.linear_fit([math.log(r.trial.batch_size) for r in rs],
                               [math.log(median_step_ms(r)) for r in rs])  # type: ignore[arg-type]  # fmt: skip
        if fit is not None:
            fits[model] = (fit, rs)
    return fits


def _throughput_fits(results: Sequence[TrialResult]) -> dict[str, tuple[stats.Fit, list[TrialResult]]]:
    """Throughput = batch / step time, so its log-log exponent is 1 less the step time's (same standard error)."""
    return {m: (stats.Fit(1 - f.slope, f.se, f.df, f.n), rs) for m, (f, rs) in step_time_fits(results).items()}


STEPS_METHOD = "log-log OLS over trials (each trial's median step time: one point per worker process), t interval"
ENERGY_METHOD = "log-log OLS over trials (each trial's gross energy per step from its measured power), t interval"


def o10(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O10"]
    fits = _throughput_fits(results)
    if not fits:
        return cannot(ob, "needs three trials over two batch sizes of one model")
    parts = [evidence(f"{m}: exponent of throughput against batch size", f.interval(STEPS_METHOD), 0.0, "above",
                      rs) for m, (f, rs) in fits.items()]  # fmt: skip
    return verdict(ob, parts)


#: How far apart two models' throughput exponents must be to "change differently".
EXPONENT_GAP = 0.1


def o11(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O11"]
    fits = _throughput_fits(results)
    if len(fits) < 2:
        return lacks(ob, "models", f"{len(fits)} model(s) with three trials over two batch sizes")
    ordered = sorted(fits, key=lambda m: fits[m][0].slope)
    lo, hi = ordered[0], ordered[-1]
    pairs = len(fits) * (len(fits) - 1) // 2
    level = 1 - 0.05 / pairs
    d = stats.slope_difference(fits[hi][0], fits[lo][0], "difference of two models' " + STEPS_METHOD, level)
    e = evidence(f"throughput exponent of {hi} less {lo}", d, EXPONENT_GAP, "above", [*fits[hi][1], *fits[lo][1]])
    return verdict(ob, [e.model_copy(update={"level": level})])


def o12(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["O12"]
    curves = [(r, r.accuracy.curve) for r in results if r.accuracy and r.accuracy.curve and len(r.accuracy.curve) >= 3]
    if not curves:
        return lacks(
            ob, "accuracy", "the plan evaluates accuracy only outside --quick, with a budget of 10 min or more"
        )
    steps = [p.step / 1000 for _, c in curves for p in c]
    acc = [p.accuracy * 100 for _, c in curves for p in c]
    s = stats.slope(steps, acc)
    if s is None:
        return cannot(ob, "needs three accuracy evaluations")
    return verdict(ob, [evidence("held-out accuracy gain (percentage points per 1000 steps)", s, 0.0, "above",
                                 [r for r, _ in curves])])  # fmt: skip


CHECKS: dict[str, Callable[[Sequence[TrialResult]], Verdict]] = {
    "O1": o1, "O2": o2, "O3": o3, "O4": o4, "O5": o5, "O6": o6,
    "O7": o7, "O8": o8, "O9": o9, "O10": o10, "O11": o11, "O12": o12,
}  # fmt: skip


def check(results: Sequence[TrialResult], store: Any = None) -> list[Verdict]:
    """Every observation's verdict over the study's successful trials."""
    ok = [r for r in results if r.ok]
    return [CHECKS[o.id](ok) for o in OBSERVATIONS]


# ---- the plan --------------------------------------------------------------------------------------------------------

#: The paper's models that edgebench's zoo holds (vision on CIFAR-10, the LSTM, the GAN and the DQN).
PAPER_MODELS = ("densenet40", "resnet50", "squeezenet_1_1", "vgg16", "xception", "googlenet", "char_cnn", "dcgan",
                "dqn", "alexnet")  # fmt: skip
PAPER_BATCHES = (4, 8, 16, 32, 64)
#: ``--quick``: two small models, three batch sizes each (two repeats of each: six points a fit), from small to large
#: (throughput against batch, O10), the largest with steps that outlast two 10 ms sampling intervals on a small CPU
#: (LeNet at 256 takes ~30 ms on two cores, DQN at 64 ~25 ms), so utilization's periodicity (O2) is measurable too.
QUICK_MODELS = {"lenet": (16, 128, 512), "dqn": (8, 32, 128)}
#: With a GPU sensor, the LSTM beside them (Observation 5 compares domains).
QUICK_LSTM = {"char_cnn": (1, 2)}
ACCURACY_MIN_BUDGET_S = 600.0


#: Repeats of each configuration (each a fresh worker process): the fits' points, so the process-to-process spread is
#: in their intervals.  ``--quick``: two, the fewest that show it.
REPEATS, QUICK_REPEATS = 3, 2


def plan(facts: Any, *, quick: bool, budget_s: float | None) -> StudyPlan:
    """The paper's matrix on this device: its models that fit, batch sizes 4-64, three repeats each; ``quick``:
    small models, two repeats, ten steps."""
    from edgebench.agents.python.feasibility import preset_for
    from edgebench.study.plan import Cell, cost_s, fits_memory, model_counts, trim

    notes: list[str] = []
    steps, warmup, repeats = (10, 2, QUICK_REPEATS) if quick else (20, 3, REPEATS)
    models = dict(QUICK_MODELS) if quick else {m: PAPER_BATCHES for m in PAPER_MODELS}
    if quick and facts.gpu_sensors:
        models.update(QUICK_LSTM)
    elif quick:
        notes.append("no GPU sensor: the LSTM model (Observation 5) is left out")
    cells = []
    for model, sizes in models.items():
        params, flops = (None, None) if quick else model_counts(model)
        if not fits_memory(facts, params):
            notes.append(f"{model} left out: its training state alone would take more than half the memory available")
            continue
        preset = None if quick else preset_for(model, "cifar10")
        for b in sizes:  # each configuration's repeats run in fresh worker processes, interleaved with the others
            values = {"model": model, "batch_size": b, "preset": preset, "repeats": repeats}
            cells.append(Cell(values, repeats * cost_s(facts, flops, b, steps + warmup)))
    accuracy = not quick and (budget_s is None or budget_s >= ACCURACY_MIN_BUDGET_S)
    limit = 120.0 if budget_s is None else min(120.0, budget_s / 5)
    kept = trim(cells, budget_s, notes, fit_points=3, reserved_s=limit if accuracy else 0.0)
    # the paper trained on the TX2's GPU: where torch reaches one, so do the trials (its load is sensed either way)
    # the paper's energy and power are the system's gross readings (nothing is idle-subtracted): no idle baseline,
    # which would add 5 s to every trial on a device with a power sensor
    common = {"steps": steps, "warmup": warmup, "infer_steps": 0, "idle_s": 0.0,
              **({"device": "cuda"} if facts.cuda else {})}  # fmt: skip
    trials = [c.trial_values(common) for c in kept]
    if accuracy:
        trials.append({"model": "lenet", "batch_size": 32, "until_accuracy": 0.95, "eval_every": 25, "data": "mnist",
                       "max_time_s": limit, "warmup": 0, "infer_steps": 0, "timeout_s": limit + 120})  # fmt: skip
    else:
        notes.append("accuracy during training (Observation 12) is evaluated only outside --quick with a budget of "
                     f"{ACCURACY_MIN_BUDGET_S / 60:g} min or more")  # fmt: skip
    estimate = sum(c.cost_s for c in kept) + (limit if accuracy else 0.0)
    return StudyPlan(trials=trials, notes=notes, estimate_s=estimate)


def _figures() -> dict[str, list[Any]]:
    from edgebench.study import figures as fig

    gpu = fig.sweep("gpu_util_pct")
    cpu = fig.curve("study-cpu-util", "CPU utilization against batch size (measured)", "CPU utilization (%)",
                    cpu_util, "the cores' mean from /proc/stat; where its counters did not advance (a copied tree), "
                    "the worker's CPU time over its cores")  # fmt: skip
    # Figure 4's and Figure 8's values as the paper's text gives them (batch 4 and 64)
    gpu_published = fig.with_published(gpu, "ResNet50 GPU utilization on the TX2", ((4, 85.6), (64, 95.6)))
    throughput = fig.with_published(fig.sweep("throughput_sps"), "ResNet50 throughput on the TX2", ((4, 9), (64, 55)))
    return {
        "O1": [gpu, cpu], "O2": [fig.trial_view("utilization")], "O3": [gpu_published, cpu], "O4": [fig.per_core],
        "O5": [gpu], "O6": [fig.trial_view("power_rails")], "O7": [fig.trial_view("power_rails")],
        "O8": [fig.gross_energy], "O9": [fig.memory_categories], "O10": [throughput],
        "O11": [fig.sweep("throughput_sps")], "O12": [],
    }  # fmt: skip


FIGURES = _figures()
