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
from edgebench.study.common import gross_energy_per_step_j, having
from edgebench.study.decide import cannot, evidence, lacks, verdict
from edgebench.study.plan import StudyPlan
from edgebench.study.records import Verdict, observation_of
from edgebench.study.tx2 import energy_fits, step_time_fits

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


def _ratio(slow: TrialResult, fast: TrialResult) -> stats.Interval | None:
    a, b = slow.latency.step_ms, fast.latency.step_ms
    if a is None or b is None:
        return None
    return stats.welch_ratio(a.mean, a.std or 0.0, a.n, b.mean, b.std or 0.0, b.n)


def m1(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["M1"]
    one = [r for r in results if r.trial.cores is not None and len(r.trial.cores) == 1]
    many = [r for r in results if r.trial.cores is None or len(r.trial.cores) > 1]
    pairs = [(a, b) for a in one for b in many if (a.trial.model, a.trial.batch_size) == (b.trial.model,
             b.trial.batch_size)]  # fmt: skip
    if not pairs:
        return lacks(ob, "cores", "no trial on one core beside one on all cores")
    parts = []
    for a, b in pairs:
        found = _ratio(a, b)
        if found is not None:
            parts.append(evidence(f"{a.trial.model} b{a.trial.batch_size}: step time on one core / on all cores",
                                  found, MATTERS_RATIO, "above", [a, b]))  # fmt: skip
    if not parts:
        return cannot(ob, "needs two measured steps in each trial")
    return verdict(ob, parts, how="any")


def m2(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["M2"]
    pinned = [r for r in results if r.trial.freq_khz]
    if len({r.trial.freq_khz for r in pinned}) < 2:
        return lacks(ob, "cpufreq", "no two trials at different pinned clocks")
    slow, fast = min(pinned, key=lambda r: r.trial.freq_khz or 0), max(pinned, key=lambda r: r.trial.freq_khz or 0)
    found = _ratio(slow, fast)
    if found is None:
        return cannot(ob, "needs two measured steps in each trial")
    return verdict(ob, [evidence(f"step time at {slow.trial.freq_khz} kHz / at {fast.trial.freq_khz} kHz", found,
                                 MATTERS_RATIO, "above", [slow, fast])])  # fmt: skip


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
        i = fit.interval("log-log OLS over every measured step, t interval")
        parts.append(evidence(f"{model}: exponent of step time against batch size", i, 1.0, "below", rs))
    return verdict(ob, parts)


def m5(results: Sequence[TrialResult]) -> Verdict:
    ob = BY_ID["M5"]
    rows = having(results, gross_energy_per_step_j)
    if not rows:
        return lacks(ob, "power", "energy is never decided from the utilization estimate")
    parts = []
    for model, (fit, rs) in energy_fits(rows).items():  # energy per sample = per step / batch: exponent less 1
        e = stats.Fit(fit.slope - 1, fit.se, fit.df, fit.n).interval("log-log OLS over every measured step, t interval")
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
    where the device has a frequency table (pinning needs root)."""
    from edgebench.study.plan import Cell, trim

    notes: list[str] = []
    steps, warmup = (10, 2) if quick else (20, 5)
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
    kept = trim(cells, budget_s, notes)
    common = {"steps": steps, "warmup": warmup, "infer_steps": 0}
    return StudyPlan([c.trial_values(common) for c in kept], notes, sum(c.cost_s for c in kept))


def _figures() -> dict[str, list[Any]]:
    from edgebench.study import figures as fig

    step = fig.with_published(fig.sweep("step_time_ms"), "LeNet on the Meizu 16T (big cores, 1.7 GHz)",
                              ((1, 8.8), (32, 28.7)))  # fmt: skip
    return {"M1": [fig.sweep_x("step_time_ms", "cores")], "M2": [fig.sweep_x("step_time_ms", "freq_khz")],
            "M3": [fig.trial_view("clocks")], "M4": [step], "M5": [fig.sweep("energy_per_sample_j")]}  # fmt: skip


FIGURES = _figures()
