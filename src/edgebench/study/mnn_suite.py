"""The MNN-based suite's implied findings (seed 000): its README says core count, frequency and temperature matter,
and its tables show latency and energy per sample against batch size.

The suite states no numbered observations; these are the claims its scripts are built to show, checked the same way
as the papers' (:mod:`edgebench.study.decide`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgebench.records.result import TrialResult
from edgebench.study import stats
from edgebench.study.common import configurations, gross_energy_per_step_j, having, values
from edgebench.study.decide import cannot, evidence, lacks, too_few_repeats, verdict
from edgebench.study.plan import StudyPlan
from edgebench.study.records import Verdict, observation_of
from edgebench.study.tx2 import ENERGY_METHOD, STEPS_METHOD, energy_fits, step_time_fits

STUDY = "mnn-suite"
TITLE = "On-device training with MNN: the suite's implied findings"
SOURCE = "the MNN-based on-device training benchmark suite's README and result tables (seed 000)"


_obs = observation_of(STUDY)


OBSERVATIONS = (
    _obs(
        "M1",
        "more cores train faster",
        "With different parameters you can change the number of CPU cores used "
        "for training (get_data_root.sh): the core count affects training performance.",
        "<Device>_Core_<mask>/",
        "the Meizu 16T trained on its four big cores (mask f0)",
        "cores",
    ),
    _obs(
        "M2",
        "CPU frequency matters",
        "Frequency is an important factor affecting training performance as well.",
        "<Device>_Freq_<kHz>/",
        "LeNet at 1.7 GHz on the Meizu 16T",
        "cpufreq",
    ),
    _obs(
        "M3",
        "training heats the device and lowers its clock",
        "Training often takes a substantial period of time "
        "which may lead to thermal issues and therefore the CPU frequency.",
        "freq_temperature.csv",
        "temperature and every core's clock over a long run",
        "thermal",
    ),
    _obs(
        "M4",
        "step time grows less than the batch",
        "time_table_<Net>.csv: training latency per batch size.",
        "time_table_Lenet.csv",
        "LeNet 8.8 ms at batch 1, 28.7 ms at batch 32 (Meizu 16T, big cores, 1.7 GHz)",
    ),
    _obs(
        "M5",
        "energy per sample falls with the batch",
        "singleSample_energy_<Device>.csv: energy per sample per batch size.",
        "singleSample_energy_<Device>.csv",
        "energy per sample against batch size 1-32",
        "power",
    ),
)
BY_ID = {o.id: o for o in OBSERVATIONS}
#: A change of the step time by less than this factor is not "affecting performance".
MATTERS_RATIO = 1.1


def m1(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["M1"]
    groups = configurations(results)
    one = [g for g in groups if g[0].trial.cores is not None and len(g[0].trial.cores) == 1]
    many = [g for g in groups if g[0].trial.cores is None or len(g[0].trial.cores) > 1]
    pairs = [(a, b) for a in one for b in many if (a[0].trial.model, a[0].trial.batch_size) == (b[0].trial.model,
             b[0].trial.batch_size) and b[0].trial.freq_khz is None]  # fmt: skip
    if not pairs:
        return lacks(ob, "cores", "no trial on one core beside one on all cores")
    parts = []
    for a, b in pairs:
        found = stats.ratio_interval(values(a), values(b))
        if found is not None:
            t = a[0].trial
            parts.append(evidence(f"{t.model} b{t.batch_size}: step time on one core / on all cores", found,
                                  MATTERS_RATIO, "above", [*a, *b]))  # fmt: skip
    if not parts:
        return too_few_repeats(ob)
    return verdict(ob, parts, how="any")


def m2(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["M2"]
    pinned = [g for g in configurations(results) if g[0].trial.freq_khz]
    if len({g[0].trial.freq_khz for g in pinned}) < 2:
        return lacks(ob, "cpufreq", "no two trials at different pinned clocks")
    slow = min(pinned, key=lambda g: g[0].trial.freq_khz or 0)
    fast = max(pinned, key=lambda g: g[0].trial.freq_khz or 0)
    found = stats.ratio_interval(values(slow), values(fast))
    if found is None:
        return too_few_repeats(ob)
    return verdict(ob, [evidence(f"step time at {slow[0].trial.freq_khz} kHz / at {fast[0].trial.freq_khz} kHz",
                                 found, MATTERS_RATIO, "above", [*slow, *fast])])  # fmt: skip


def m3(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["M3"]
    rows = [r for r in results if r.temperature_c and r.cpu.freq_khz and any(v for v in r.cpu.freq_khz)]
    if not rows:
        return lacks(ob, "thermal", "no trial recorded both temperature and clocks")
    temps = [max(x.max for x in (r.temperature_c or {}).values()) for r in rows]
    clocks = [float(sum(v for v in r.cpu.freq_khz if v) / len([v for v in r.cpu.freq_khz if v])) for r in rows]  # type: ignore[union-attr]
    found = stats.correlation(temps, clocks)
    if found is None:
        return cannot(ob, f"temperature or clock did not vary over the {len(rows)} trials (needs four that differ)")
    return verdict(ob, [evidence("correlation of trial temperature and mean clock (Pearson r)", found, 0.0, "below",
                                 rows)])  # fmt: skip


def m4(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["M4"]
    fits = step_time_fits(results)
    if not fits:
        return cannot(ob, "needs trials over two batch sizes of one model")
    parts = []
    for model, (fit, rs) in fits.items():
        i = fit.interval(STEPS_METHOD)
        parts.append(evidence(f"{model}: exponent of step time against batch size", i, 1.0, "below", rs))
    return verdict(ob, parts)


def m5(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["M5"]
    rows = having(results, gross_energy_per_step_j)
    if not rows:
        return lacks(ob, "power", "energy is never decided from the utilization estimate")
    parts = []
    for model, (fit, rs) in energy_fits(rows).items():  # energy per sample = per step / batch: exponent less 1
        e = stats.Fit(fit.slope - 1, fit.se, fit.df, fit.n).interval(ENERGY_METHOD)
        parts.append(evidence(f"{model}: exponent of energy per sample against batch size", e, 0.0, "below", rs))
    if not parts:
        return cannot(ob, "needs measured energy at three trials over two batch sizes of one model")
    return verdict(ob, parts)


CHECKS = {"M1": m1, "M2": m2, "M3": m3, "M4": m4, "M5": m5}


def check(results: Sequence[TrialResult], store: Any = None) -> list[Verdict]:
    ok = [r for r in results if r.ok]
    return [CHECKS[o.id](ok) for o in OBSERVATIONS]


#: The suite's batch sizes, and LeNet's (its quick model).
BATCHES = (1, 2, 4, 8, 16, 32)


def plan(facts: Any, *, quick: bool, budget_s: float | None) -> StudyPlan:
    """LeNet over the suite's batch sizes on all cores; at batch 16 on one core; at the lowest and highest clock
    where the device has a frequency table (pinning needs root); each configuration two (``quick``) or three times,
    each a fresh worker process."""
    from edgebench.study.plan import Cell, trim

    notes: list[str] = []
    steps, warmup = (10, 2) if quick else (20, 5)
    repeats = 2 if quick else 3  # the ratios (M1, M2) are taken between repeats of two configurations
    sizes = (4, 16, 64) if quick else BATCHES
    cells = [Cell({"model": "lenet", "batch_size": b}, 5.0) for b in sizes]
    if len(facts.allowed) > 1:
        cells.append(Cell({"model": "lenet", "batch_size": 16, "cores": (facts.allowed[-1],), "threads": 1}, 5.0))
    else:
        notes.append("one usable core: the core-count comparison (M1) is left out")
    if len(facts.frequencies) >= 2:
        for khz in (facts.frequencies[0], facts.frequencies[-1]):
            cells.append(Cell({"model": "lenet", "batch_size": 16, "freq_khz": khz}, 5.0))
    else:
        notes.append("no cpufreq frequency table: the frequency comparison (M2) is left out")
    cells = [Cell(c.values, c.cost_s * repeats) for c in cells]
    kept = trim(cells, budget_s, notes)
    common = {"steps": steps, "warmup": warmup, "infer_steps": 0, "repeats": repeats}
    return StudyPlan([c.trial_values(common) for c in kept], notes, sum(c.cost_s for c in kept))


def _figures() -> dict[str, list[Any]]:
    from edgebench.study import figures as fig

    step = fig.with_published(fig.sweep("step_time_ms"), "LeNet on the Meizu 16T (big cores, 1.7 GHz)",
                              ((1, 8.8), (32, 28.7)))  # fmt: skip
    return {"M1": [fig.sweep_x("step_time_ms", "cores")], "M2": [fig.sweep_x("step_time_ms", "freq_khz")],
            "M3": [fig.trial_view("clocks")], "M4": [step], "M5": [fig.sweep("energy_per_sample_j")]}  # fmt: skip


FIGURES = _figures()
