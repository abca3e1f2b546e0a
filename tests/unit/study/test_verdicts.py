"""The study's verdict logic on synthetic devices: trial records built as a device would store them (per-core
utilization, GPU load, power rails, memory by category, step statistics), one device where an observation holds,
one where it does not, one where it cannot be checked.  The records carry the raw figures; the verdicts and their
intervals are computed by the checks."""

import math

import numpy as np
import pytest

from edgebench.records.memory import MemoryByCategory
from edgebench.records.result import (
    CpuUtil,
    EstimatedEnergy,
    GpuUtil,
    Latency,
    MeasuredEnergy,
    Memory,
    Predictability,
    RailEnergy,
    Stats,
    TrialResult,
)
from edgebench.records.trial import Trial
from edgebench.study import dnntune, mnn_suite, stats, tx2
from edgebench.study.decide import combine, compare

RNG = np.random.default_rng(7)


def stored(model="lenet", batch=8, *, step_ms=None, steps=20, per_core=None, gpu=None, rails=None, act=None,
           periodicity=None, cores=None, threads=None, precision="fp32", mode="train", i=0):  # fmt: skip
    """A trial as the store returns it: step times drawn around ``step_ms``, the rest as given."""
    trial = Trial.model_construct(**{**Trial().model_dump(), "model": model, "batch_size": batch, "cores": cores,
                                     "threads": threads, "precision": precision, "mode": mode})  # fmt: skip
    draws = RNG.normal(step_ms, 0.02 * step_ms, steps) if step_ms else None
    latency = Latency()
    if draws is not None:
        latency = Latency(step_ms=Stats(mean=float(draws.mean()), std=float(draws.std(ddof=1)), n=steps,
                                        cv=float(draws.std(ddof=1) / draws.mean())),
                          throughput_sps=batch * 1000 / float(draws.mean()), measured_steps=steps)  # fmt: skip
    fields = {}
    if per_core is not None:
        fields["cpu"] = {"util_pct": CpuUtil(per_core=per_core, mean=sum(per_core) / len(per_core))}
    if gpu is not None:
        fields["gpu_util_pct"] = GpuUtil(per_gpu=[gpu], mean=gpu)
    if rails is not None:
        window = steps * (step_ms or 10) / 1000
        by_rail = {n: RailEnergy(energy_j=w * window, gross_energy_j=w * window, avg_power_w=w, idle_power_w=None)
                   for n, w in rails.items()}  # fmt: skip
        total = sum(rails.values()) * window
        fields["energy"] = MeasuredEnergy(energy_j=total, gross_j=total, window_s=window, source="jetson_power: VDD_IN",
                                          by_rail=by_rail)  # fmt: skip
    if act is not None:
        fields["memory"] = Memory(by_category=MemoryByCategory(batch_size=batch, params_bytes=1 << 20,
                                  gradients_bytes=1 << 20, optimizer_bytes=1 << 20, activations_bytes=act))  # fmt: skip
    if periodicity is not None:
        fields["predictability"] = Predictability(step_time_cv=0.02, step_period_ms=step_ms or 10,
                                                  utilization_periodicity=periodicity)  # fmt: skip
    r = TrialResult(trial_id=f"t-{model}-{batch}-{i}-{RNG.integers(1e9)}", status="ok", trial=trial, latency=latency,
                    **fields)  # fmt: skip
    return r


def outcome(verdicts, oid):
    return next(v for v in verdicts if v.observation.id == oid)


def test_interval_rule():
    assert compare(1.2, 2.0, 1.0, "above") == "holds"
    assert compare(0.1, 0.9, 1.0, "above") == "does not hold"
    assert compare(0.5, 1.5, 1.0, "above") == "inconclusive"
    assert compare(-0.5, 0.5, 1.0, "within") == "holds" and compare(1.5, 2, 1.0, "within") == "does not hold"
    assert compare(0.5, 1.5, 1.0, "within") == "inconclusive"


def test_intervals_come_from_scipy_stats():
    from scipy import stats as scipy_stats

    x, y = [1.0, 2.0, 3.0, 4.0], [2.1, 3.9, 6.2, 7.8]
    fit, ref = stats.linear_fit(x, y), scipy_stats.linregress(x, y)
    assert (fit.slope, fit.se, fit.df) == pytest.approx((ref.slope, ref.stderr, 2))
    low, high = scipy_stats.t.interval(0.95, 2, loc=ref.slope, scale=ref.stderr)
    assert (fit.interval("m").low, fit.interval("m").high) == pytest.approx((low, high))
    a, b = [10.0, 10.4, 9.8], [5.1, 4.9, 5.0]
    ratio = stats.ratio_interval(a, b)
    ci = scipy_stats.ttest_ind(np.log(a), np.log(b), equal_var=False).confidence_interval(0.95)
    assert ratio.estimate == pytest.approx(math.exp(np.mean(np.log(a)) - np.mean(np.log(b))))
    assert (ratio.low, ratio.high) == pytest.approx((math.exp(ci.low), math.exp(ci.high)))
    assert stats.ratio_interval([10.0], b) is None  # one repeat says nothing of the next process
    welch = stats.welch_difference(a, b)
    ci = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (welch.low, welch.high) == pytest.approx((ci.low, ci.high))


def _batches(make, sizes=(16, 32, 64, 128), repeats=2):
    return [make(b, i) for b in sizes for i in range(repeats)]


def test_throughput_holds_when_steps_grow_slower_than_the_batch_and_not_when_they_grow_with_it():
    sub = _batches(lambda b, i: stored(batch=b, step_ms=5 * b**0.5, i=i))
    assert outcome(tx2.check(sub), "O10").outcome == "holds"
    assert outcome(mnn_suite.check(sub), "M4").outcome == "holds"
    fixed = _batches(lambda b, i: stored(batch=b, step_ms=0.5 * b**1.0, i=i))  # throughput constant in the batch
    o10 = outcome(tx2.check(fixed), "O10")
    assert o10.outcome == "inconclusive"  # an exponent of 0 cannot be told from a small positive one
    assert abs(o10.evidence[0].estimate) < 0.05 and o10.evidence[0].ci_low < 0 < o10.evidence[0].ci_high
    slower = _batches(lambda b, i: stored(batch=b, step_ms=0.2 * b**1.3, i=i))  # steps grow faster than the batch
    assert outcome(tx2.check(slower), "O10").outcome == "does not hold"
    assert outcome(mnn_suite.check(slower), "M4").outcome == "does not hold"
    assert outcome(tx2.check([stored(step_ms=5)]), "O10").outcome == "cannot be checked here"


def test_memory_intermediate_part_grows_with_the_batch():
    grows = _batches(lambda b, i: stored(batch=b, step_ms=5, act=40_000 * b + 1000), repeats=1)
    v = outcome(tx2.check(grows), "O9")
    assert v.outcome == "holds"
    assert v.evidence[0].estimate == pytest.approx(40_000 / 2**20)
    flat = _batches(lambda b, i: stored(batch=b, step_ms=5, act=1_000_000), repeats=1)
    assert outcome(tx2.check(flat), "O9").outcome == "does not hold"
    assert "memory by category" in outcome(tx2.check([stored(step_ms=5)]), "O9").reason


def test_per_core_differences():
    differ = [stored(per_core=[80 + RNG.normal(0, 2), 30 + RNG.normal(0, 2)], i=i) for i in range(6)]
    v = outcome(tx2.check(differ), "O4")
    assert v.outcome == "holds" and v.evidence[0].estimate == pytest.approx(50, abs=5)
    same = [stored(per_core=[60 + (d := RNG.normal(0, 1)), 60 - d + RNG.normal(0, 0.5)], i=i) for i in range(8)]
    assert outcome(tx2.check(same), "O4").outcome == "does not hold"
    one = [stored(per_core=[70.0], i=i) for i in range(3)]
    assert outcome(tx2.check(one), "O4").outcome == "cannot be checked here"


def test_saturated_cores_are_a_finding_on_a_quiet_device_and_a_reason_on_a_busy_one():
    """Every core 100% busy: when the training alone did it, the cores do not differ (measured); when other
    processes held a busy share of them, nothing can be told apart and the reason says so."""
    from edgebench.records.result import Hygiene

    def full(other_pct, i):
        r = stored(per_core=[100.0, 100.0 - abs(RNG.normal(0, 0.3))], i=i)
        return r.model_copy(update={"hygiene": Hygiene(other_cpu_pct=other_pct)})

    quiet = [full(3.0, i) for i in range(6)]
    assert outcome(tx2.check(quiet), "O4").outcome == "does not hold"
    busy = [full(60.0, i) for i in range(6)]
    v = outcome(tx2.check(busy), "O4")
    assert v.outcome == "cannot be checked here" and "other processes used 60%" in v.reason


def test_periodicity_from_each_series_autocorrelation():
    periodic = [stored(step_ms=50, periodicity=[0.8 + RNG.normal(0, 0.05), 0.7 + RNG.normal(0, 0.05)], i=i)
                for i in range(4)]  # fmt: skip
    assert outcome(tx2.check(periodic), "O2").outcome == "holds"
    noise = [stored(step_ms=50, periodicity=[RNG.normal(0, 0.03), RNG.normal(0, 0.03)], i=i) for i in range(4)]
    assert outcome(tx2.check(noise), "O2").outcome == "does not hold"
    short = [stored(step_ms=5, periodicity=[None, None], i=i) for i in range(2)]
    assert outcome(tx2.check(short), "O2").outcome == "cannot be checked here"


def test_gpu_observations_need_a_gpu_and_are_decided_with_one():
    cpu_only = _batches(lambda b, i: stored(batch=b, step_ms=10, per_core=[50.0, 40.0], i=i))
    checks = tx2.check(cpu_only)
    for oid in ("O1", "O3", "O5"):
        assert outcome(checks, oid).outcome == "cannot be checked here" and "GPU" in outcome(checks, oid).reason
    high = _batches(lambda b, i: stored(batch=b, step_ms=10, per_core=[20 + RNG.normal(0, 0.3)] * 2,
                                        gpu=70 + 3 * math.log2(b) + RNG.normal(0, 1), i=i))  # fmt: skip
    checks = tx2.check(high)
    assert outcome(checks, "O1").outcome == "holds" and outcome(checks, "O3").outcome == "holds"
    low = _batches(lambda b, i: stored(batch=b, step_ms=10, per_core=[60.0, 60.0], gpu=31.2, i=i))
    checks = tx2.check(low)  # a GPU that stays at 31% under busy cores: neither holds
    assert outcome(checks, "O1").outcome == "does not hold" and outcome(checks, "O3").outcome == "does not hold"


def test_energy_needs_a_power_sensor_never_the_estimate():
    sizes = (4, 16, 64)
    estimate = EstimatedEnergy(power_model="linear-utilization", energy_j=1.0, per_step_j=0.1)
    no_sensor = [stored(batch=b, step_ms=10 * b**0.5, i=i).model_copy(update={"estimated_energy": estimate})
                 for b in sizes for i in range(2)]  # fmt: skip
    assert all(outcome(tx2.check(no_sensor), o).outcome == "cannot be checked here" for o in ("O6", "O7", "O8"))
    assert "power sensor" in outcome(tx2.check(no_sensor), "O8").reason
    rails = {"VDD_SYS_GPU": 1.0, "VDD_SYS_DDR": 1.6, "VDD_SYS_CPU": 0.5}
    sensed = [stored(batch=b, step_ms=10 * b**0.5, rails={k: v + RNG.normal(0, 0.02) for k, v in rails.items()}, i=i)
              for b in sizes for i in range(2)]  # fmt: skip
    checks = tx2.check(sensed)
    assert outcome(checks, "O8").outcome == "holds"  # energy per step ~ b^0.5: grows, not proportionally
    assert outcome(checks, "O6").outcome == "holds"  # memory rail above the GPU's
    assert outcome(mnn_suite.check(sensed), "M5").outcome == "holds"
    gpu_heavy = [
        stored(batch=b, step_ms=10 * b**1.3, rails={"VDD_SYS_GPU": 3.0 + RNG.normal(0, 0.02), "VDD_SYS_DDR": 1.0}, i=i)
        for b in sizes
        for i in range(2)
    ]
    checks = tx2.check(gpu_heavy)
    assert outcome(checks, "O6").outcome == "does not hold" and outcome(checks, "O8").outcome == "does not hold"


def repeated(n=3, **kw):
    """A configuration's repeats: ``n`` trials of one Trial, each its own process (its own step draws)."""
    return [stored(i=i, **kw) for i in range(n)]


def test_int8_and_core_comparisons_from_repeats():
    fp32 = repeated(batch=32, step_ms=20, mode="infer")
    fast = [*fp32, *repeated(batch=32, step_ms=8, mode="infer", precision="int8")]
    d5 = outcome(dnntune.check(fast), "D5")
    assert d5.outcome == "holds" and "Welch t interval on the log scale" in d5.evidence[0].test
    assert d5.evidence[0].n == 6  # three repeats a side, not the steps
    close = [*fp32, *repeated(batch=32, step_ms=19, mode="infer", precision="int8")]
    assert outcome(dnntune.check(close), "D5").outcome == "does not hold"
    assert outcome(dnntune.check(fp32), "D5").outcome == "cannot be checked here"
    once = outcome(dnntune.check([fp32[0], fast[3]]), "D5")  # one process each: nothing can be told
    assert once.outcome == "inconclusive" and "one repeat per configuration" in once.reason
    cores = [*repeated(batch=16, step_ms=10), *repeated(batch=16, step_ms=18, cores=(1,), threads=1)]
    assert outcome(mnn_suite.check(cores), "M1").outcome == "holds"
    assert outcome(mnn_suite.check(cores[:3]), "M1").outcome == "cannot be checked here"
    assert outcome(mnn_suite.check([cores[0], cores[3]]), "M1").outcome == "inconclusive"


def test_combining_parts():
    ev = outcome(tx2.check(_batches(lambda b, i: stored(batch=b, step_ms=5 * b**0.5, i=i))), "O10").evidence
    assert combine(ev, "all") == "holds"


def test_big_and_little_against_big_only():
    big = repeated(batch=64, step_ms=10, cores=(2, 3), threads=2)
    helps = [*repeated(batch=64, step_ms=6, cores=(0, 1, 2, 3)), *big]
    assert outcome(dnntune.check(helps), "D4").outcome == "does not hold"  # every core is faster: it benefits
    no_gain = [*repeated(batch=64, step_ms=10, cores=(0, 1, 2, 3)), *big]
    assert outcome(dnntune.check(no_gain), "D4").outcome == "holds"  # within the repeats' spread of big only
    assert outcome(dnntune.check(no_gain[:3]), "D4").outcome == "cannot be checked here"


def test_gpu_against_cpu_needs_a_gpu_trial_and_measured_energy():
    def on(device, step_ms, watts):
        rs = repeated(model="mobilenet_v2", batch=1, step_ms=step_ms, mode="infer", rails={"VDD_IN": watts})
        return [r.model_copy(update={"trial": r.trial.model_copy(update={"device": device})}) for r in rs]

    faster = [*on("cpu", 40, 3.0), *on("cuda", 10, 5.0)]
    checks = dnntune.check(faster)
    assert outcome(checks, "D2").outcome == "holds"  # 4x faster on the GPU
    assert outcome(checks, "D3").outcome == "holds"  # 40 ms x 3 W against 10 ms x 5 W
    slower = [*on("cpu", 10, 3.0), *on("cuda", 12, 6.0)]
    checks = dnntune.check(slower)
    assert outcome(checks, "D2").outcome == "does not hold" and outcome(checks, "D3").outcome == "does not hold"
    checks = dnntune.check(faster[:3])
    assert all(outcome(checks, o).outcome == "cannot be checked here" for o in ("D2", "D3"))
    assert "GPU" in outcome(checks, "D2").reason


def test_accuracy_during_training():
    from edgebench.records.result import Accuracy, AccuracyPoint

    def trained(curve):
        points = [AccuracyPoint(step=s, accuracy=a, elapsed_s=s / 10) for s, a in curve]
        return stored(batch=32, step_ms=10).model_copy(update={"accuracy": Accuracy(reached=False, curve=points)})

    rising = trained([(25, 0.58), (50, 0.78), (75, 0.89), (100, 0.93)])
    assert outcome(tx2.check([rising]), "O12").outcome == "holds"
    flat = trained([(25, 0.11), (50, 0.09), (75, 0.12), (100, 0.10), (125, 0.11)])
    assert outcome(tx2.check([flat]), "O12").outcome == "inconclusive"  # no trend either way
    falling = trained([(25, 0.5), (50, 0.41), (75, 0.3), (100, 0.22)])
    assert outcome(tx2.check([falling]), "O12").outcome == "does not hold"
    assert outcome(tx2.check([stored(step_ms=10)]), "O12").outcome == "cannot be checked here"


def test_utilization_that_never_moves_has_no_step_pattern_on_a_quiet_device():
    """Steps the sampler resolves, every core's series constant: O2 does not hold (range 0 exactly) on a quiet
    device, and cannot be checked where other processes kept the cores busy."""
    from edgebench.records.result import Hygiene

    def flat(other_pct, i):
        r = stored(step_ms=40, per_core=[100.0, 100.0], periodicity=[None, None], i=i)
        p = r.predictability.model_copy(update={"periodicity_note": "utilization did not vary within the steps"})
        return r.model_copy(update={"predictability": p, "hygiene": Hygiene(other_cpu_pct=other_pct)})

    v = outcome(tx2.check([flat(2.0, i) for i in range(3)]), "O2")
    assert v.outcome == "does not hold" and v.evidence[0].estimate == 0 and v.evidence[0].n == 3
    busy = outcome(tx2.check([flat(70.0, i) for i in range(3)]), "O2")
    assert busy.outcome == "cannot be checked here" and "other processes used 70%" in busy.reason
    unresolved = stored(step_ms=4, per_core=[100.0, 100.0], i=9)  # no periodicity measured at all
    assert outcome(tx2.check([unresolved]), "O2").outcome == "cannot be checked here"


def test_a_replayed_trees_constant_sensors_decide_no_observation_on_them():
    """Trials read through --sysfs-root: the GPU's load and the rails are the tree's constant files.  An observation
    on them becomes "cannot be checked here: replayed tree: sensors constant"; one on step times keeps its verdict
    (the hygiene checks, measure/trust.py, say separately that a replayed trial decides nothing silently)."""
    from edgebench.records.device import DeviceEnvironment
    from edgebench.study.decide import replayed

    tree = DeviceEnvironment(hostname="laptop", sysfs_root="/x/fixtures/sysfs/jetson_tx2", sensor_source="replayed")
    results = [
        stored(
            "dqn",
            b,
            step_ms=10 * b**0.5,
            gpu=31.2,
            per_core=[50.0, 50.0],
            rails={"VDD_SYS_GPU": 1.0, "VDD_SYS_DDR": 1.46},
            i=i,
        ).model_copy(update={"device": tree})
        for i, b in enumerate((8, 16, 32, 64) * 2)
    ]
    o6 = tx2.o6(results)
    assert o6.outcome == "holds"  # what the constants alone would say
    judged = replayed(o6, results)
    assert judged.outcome == "cannot be checked here" and not judged.evidence
    assert judged.reason.startswith("replayed tree: sensors constant: 8 of 8 trials read the copied tree jetson_tx2")
    assert replayed(tx2.o5(results), results).outcome == "cannot be checked here"  # no LSTM: already, now replayed
    o10 = tx2.o10(results)
    assert replayed(o10, results) == o10  # throughput: no sensor of the tree's
    live = [r.model_copy(update={"device": DeviceEnvironment(hostname="orin", sysfs_root="/", sensor_source="live")})
            for r in results]  # fmt: skip
    assert replayed(tx2.o6(live), live).outcome == "holds"  # a device's own rails decide


def test_beside_busy_loops_every_decision_of_the_quick_study_is_inconclusive_with_the_reason():
    """The "Done when" of issue 37: beside two busy-loop hogs, every decision `study tx2 --quick` would have made is
    "inconclusive" with the reason.  The trials here are the quick plan's, their hygiene what the worker's scheduler
    counters give beside a busy loop on each core (its threads waited for a CPU half the time they were runnable);
    the same trials quiet make the decisions it would have made."""
    import numpy as np

    from edgebench.measure.hygiene import hygiene
    from edgebench.measure.trust import disturbances
    from edgebench.records.events import Scheduling

    waited = Scheduling(on_cpu_s=0.2, run_queue_wait_s=0.2, involuntary_switches=80, threads=2, window_s=0.4)
    quiet, busy = [], []
    for i, (model, batch) in enumerate([(m, b) for m, sizes in tx2.QUICK_MODELS.items() for b in sizes]):
        r = stored(model, batch, step_ms=2.0 * batch**0.8, per_core=[100.0, 100.0], act=batch << 16,
                   periodicity=[0.6, 0.5], cores=(0, 1), threads=2, i=i)  # fmt: skip
        quiet.append(r)
        h = hygiene(np.full(10, 2.0), None, [0, 1], 0, 400_000_000, sched=waited, threads=2)
        busy.append(r.model_copy(update={"hygiene": h}))
    assert all(disturbances(r) and disturbances(r)[0].startswith("device busy") for r in busy)
    decided = [v.observation.id for v in tx2.check(quiet) if v.outcome in ("holds", "does not hold")]
    assert len(decided) >= 3  # throughput (O10, O11), memory (O9): decisions a quiet device gives
    from edgebench.study.report import undisturbed_verdicts
    from edgebench.study.studies import get_study

    verdicts = {v.observation.id: v for v in undisturbed_verdicts(get_study("tx2"), busy)}
    for oid in decided:
        assert verdicts[oid].outcome == "inconclusive" and "device busy" in verdicts[oid].reason, verdicts[oid]


def test_no_verdict_from_disturbed_trials():
    """Seen: O10 "does not hold" and "holds" in two runs beside busy loops, neither naming the 6-7 busy trials of 8.
    Every trial busy: each verdict they would have decided is inconclusive with the reason; some busy: the rest
    decide, and the verdict names what it left out."""
    from edgebench.records.result import Hygiene
    from edgebench.study.report import undisturbed_verdicts
    from edgebench.study.studies import get_study

    def busy(r, pct=82.0):
        return r.model_copy(update={"hygiene": Hygiene(other_cpu_pct=pct)})

    trials = _batches(lambda b, i: stored(batch=b, step_ms=5 * b**0.5, i=i))
    study = get_study("tx2")
    everything = {v.observation.id: v for v in undisturbed_verdicts(study, [busy(r) for r in trials])}
    o10 = everything["O10"]
    why = "inconclusive: 8 of 8 trials disturbed (device busy: other processes used 82% of the device in 8)"
    assert o10.outcome == "inconclusive" and o10.reason.startswith(why)
    assert any("would have read" in n for n in o10.notes)
    assert all(v.outcome not in ("holds", "does not hold") for v in everything.values())
    # what every trial lacks is said of every trial, not of the none left undisturbed (seen: O2 "the per-core
    # counters did not advance (a copied tree)" on a live machine when every trial was busy)
    o11 = everything["O11"]
    assert o11.outcome == "cannot be checked here" and "1 model(s)" in o11.reason, o11
    some = {v.observation.id: v for v in undisturbed_verdicts(study, [busy(trials[0]), *trials[1:]])}
    assert some["O10"].outcome == "holds" and some["O10"].notes[-1].startswith("left out 1 of 8 trials as disturbed")
    assert trials[0].trial_id not in some["O10"].evidence[0].trial_ids
