"""Is edgebench's "different" calibrated?  A/A pairs of one configuration, and the smallest difference it finds.

Target: of pairs of the same configuration compared with ``--repeats 5`` a side, at most 5% are called different at
alpha 0.05 (the binomial interval of the share is printed).  Before repeats, ``compare`` tested the steps of one
process per side and called 5 of 8 LeNet A/A pairs different here.

Parts (``--parts``, all by default):

* ``spread``: LeNet trials in fresh processes (``--spread-trials``, ``edgebench run -m lenet -b 8 --threads 1
  --steps 200 --warmup 10`` by default) measure this machine's run-to-run spread: the repeats' median step times
  (between processes), each process's step spread and lag-one autocorrelation (within), and the variance components
  of a random-intercept model of log step time (statsmodels' MixedLM: steps within processes, processes within the
  configuration); and what ``--repeats auto`` would choose for them (:func:`edgebench.measure.repeats.
  repeats_needed`).  The fake backend is then set to that spread (``EDGEBENCH_FAKE_PROCESS_CV_PCT``,
  ``..._STEP_CV_PCT``, ``..._AR1``), or to ``--process-cv`` / ``--step-cv`` / ``--ar1`` when given;
* ``fake``: ``--pairs`` A/A pairs of fake-backend trials in real worker processes: each pair is one configuration
  run 2 x ``--repeats`` times, its repeats split at random into A and B, compared as ``compare`` does (Welch's t on
  log repeat medians, disturbed repeats left out); beside it, the old step-level test on one process per side;
* ``lenet``: the same with real torch LeNet trials (``--lenet-pairs``; slow: about 40 s a pair here);
* ``power``: the smallest true difference found in 80% of pairs at 5 and at 10 repeats, with the fake backend's step
  model drawn in this process (``--sim-pairs`` pairs per difference; its A/A rate too), and with real fake-backend
  trials slowed by a known delay (``--delays``, ``--power-pairs`` pairs each, repeats of A and B interleaved).

On a busy machine every trial is flagged busy and ``compare`` decides nothing (each pair "inconclusive"); there
``--keep-disturbed`` runs the test on every repeat, to see what it makes of that noise.

Run: ``python benchmarks/aa_calibration.py`` (an hour and more here); a quick look:
``python benchmarks/aa_calibration.py --spread-trials 5 --pairs 8 --lenet-pairs 2 --steps 60 --power-pairs 3``.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time
from itertools import islice
from typing import Any

import numpy as np

from edgebench.backends.fake.session import AR1_ENV, PROCESS_CV_ENV, STEP_CV_ENV, STEP_MS_ENV, StepModel
from edgebench.measure.repeats import TEST, compare_repeats, compare_results, repeats_needed, spread_pct
from edgebench.records.result import TrialResult

ALPHA = 0.05


def run_repeats(settings: dict[str, Any], n: int, store: str) -> list[TrialResult]:
    """``n`` repeats of one configuration as ``edgebench run --repeats n`` runs them, into ``store``."""
    from edgebench.workflows.trial import TrialRequest, run_trial

    request = TrialRequest({"idle_s": 0.0, "infer_steps": 0, **settings, "repeats": n}, store=store)
    return run_trial(request).repeats


def step_series(store: str, results: list[TrialResult]) -> list[np.ndarray]:
    """Each trial's measured step times (ms), read back from the store's events."""
    from edgebench.records.events import measured_phase, parse_events, steps_of
    from edgebench.store import Store

    out = []
    with Store(store, read_only=True) as db:
        for r in results:
            steps = steps_of(parse_events(db.series(r.trial_id, "events")), measured_phase(r.trial.mode))
            out.append(np.asarray([(s.end_ns - s.start_ns) / 1e6 for s in steps]))
    return out


def lag1(x: np.ndarray) -> float:
    x = np.log(x) - np.log(x).mean()
    return float((x[1:] * x[:-1]).sum() / (x * x).sum()) if len(x) > 2 and (x * x).sum() > 0 else 0.0


def mixed_components(series: list[np.ndarray]) -> tuple[float, float] | None:
    """Between-process and within-process sd of log step time (percent), from a random-intercept model fitted by
    statsmodels' MixedLM (``pip install 'edgebench[stats]'``); None where it is missing or does not converge."""
    try:
        import pandas as pd
        import statsmodels.formula.api as smf
    except ImportError:
        print("  (statsmodels not installed: pip install 'edgebench[stats]' for the variance components)")
        return None
    frame = pd.DataFrame({"log_ms": np.concatenate([np.log(s) for s in series]),
                          "process": np.concatenate([[i] * len(s) for i, s in enumerate(series)])})  # fmt: skip
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = smf.mixedlm("log_ms ~ 1", frame, groups=frame["process"]).fit()
        except (ValueError, np.linalg.LinAlgError):
            return None
    return 100 * math.sqrt(float(fit.cov_re.iloc[0, 0])), 100 * math.sqrt(float(fit.scale))


def binomial_line(hits: int, n: int) -> str:
    from scipy import stats

    ci = stats.binomtest(hits, n).proportion_ci(0.95)
    return f"{hits}/{n} = {hits / n:.1%} (95% interval {ci.low:.1%}-{ci.high:.1%})"


def measure_spread(args: argparse.Namespace, store: str) -> StepModel:
    print(f"spread: {args.spread_trials} LeNet trials, b{args.batch} --threads 1 --steps {args.steps} "
          f"--warmup {args.warmup}, each a fresh worker process", flush=True)  # fmt: skip
    settings = {"model": "lenet", "batch_size": args.batch, "threads": 1, "steps": args.steps, "warmup": args.warmup}
    results = [r for r in run_repeats(settings, args.spread_trials, store) if r.ok]
    series = step_series(store, results)
    medians = [float(np.median(s)) for s in series]
    within = statistics.median(float(np.std(np.log(s), ddof=1)) * 100 for s in series)
    phi = statistics.median(lag1(s) for s in series)
    between = spread_pct(medians) or 0.0
    print(f"  repeat medians {min(medians):.2f}-{max(medians):.2f} ms (median {statistics.median(medians):.2f}): "
          f"between processes cv {between:.1f}%; within a process cv {within:.1f}%, lag-one autocorrelation "
          f"{phi:.2f}")  # fmt: skip
    busy = [r.trial_id for r in results if r.hygiene and r.hygiene.warning and "busy" in r.hygiene.warning]
    if busy:
        print(f"  {len(busy)} of {len(results)} trials flagged busy: the machine was not quiet")
    components = mixed_components(series)
    if components:
        print(f"  MixedLM on log step time: between-process sd {components[0]:.1f}%, within-process sd "
              f"{components[1]:.1f}%")  # fmt: skip
    print(f"  --repeats auto would choose {repeats_needed(medians)} repeats for a 95% interval within ±5%")
    # the fake model's offset: the medians' spread less what the steps' own noise puts into a median of n steps
    process_cv = math.sqrt(max(between**2 - within**2 / args.steps * (1 + phi) / (1 - phi), 0.0))
    return StepModel(step_ms=statistics.median(medians), process_cv_pct=process_cv, step_cv_pct=within,
                     ar1=min(max(phi, 0.0), 0.95))  # fmt: skip


def decide(a: list[TrialResult], b: list[TrialResult], keep_disturbed: bool) -> Any:
    """``compare``'s decision (disturbed repeats left out), or with ``keep_disturbed`` the same test on every
    repeat: what the test itself does with a busy machine's noise, which ``compare`` would not decide on."""
    if not keep_disturbed:
        return compare_results(a, b)
    values = [[r.latency.step_ms.median for r in side if r.ok and r.latency.step_ms] for side in (a, b)]
    return compare_repeats(*values)


def aa_pairs(label: str, settings: dict[str, Any], pairs: int, args: argparse.Namespace, store: str, seed: int) -> None:
    """``pairs`` A/A pairs: 2 x ``repeats`` repeats of one configuration, split at random into two sides."""
    repeats = args.repeats
    print(f"{label}: {pairs} A/A pairs, {repeats} repeats a side (each pair one configuration run {2 * repeats} "
          "times, split at random)", flush=True)  # fmt: skip
    rng = random.Random(seed)
    new = old = decided = 0
    started = time.monotonic()
    for pair in range(pairs):
        results = run_repeats(settings, 2 * repeats, store)
        rng.shuffle(results)
        a, b = results[:repeats], results[repeats:]
        found = decide(a, b, args.keep_disturbed)
        if found.p_value is not None:
            decided += 1
            new += bool(found.significant)
        sa, sb = step_series(store, [a[0], b[0]])
        from scipy import stats

        old += bool(stats.ttest_ind(sa, sb, equal_var=False).pvalue < ALPHA)
        print(f"  pair {pair + 1}: {found.answer}  ({time.monotonic() - started:.0f} s)", flush=True)
    shown = binomial_line(new, decided) if decided else "no pair decided"
    kept = ", disturbed repeats kept (--keep-disturbed)" if args.keep_disturbed else ""
    print(f"  called different at alpha {ALPHA}, {TEST}{kept}: {shown} ({pairs - decided} pairs inconclusive: "
          "disturbed)")  # fmt: skip
    print(f"  the old test (Welch over the steps of one process a side): {binomial_line(old, pairs)}")


def detection(a_model: StepModel, b_model: StepModel, repeats: int, steps: int, pairs: int, rng: random.Random
              ) -> float:  # fmt: skip
    """The share of ``pairs`` in which B is found slower than A, each side ``repeats`` processes of ``steps``."""
    model_a, model_b = a_model, b_model
    hits = 0
    for _ in range(pairs):
        a = [statistics.median(islice(model_a.process(rng), steps)) for _ in range(repeats)]
        b = [statistics.median(islice(model_b.process(rng), steps)) for _ in range(repeats)]
        found = compare_repeats(a, b)
        hits += bool(found.significant) and found.direction == "slower"
    return hits / pairs


def power_curve(model: StepModel, args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    print(f"power, fake step model in this process ({model.step_ms:.2f} ms, processes {model.process_cv_pct:.1f}% "
          f"apart, steps {model.step_cv_pct:.1f}%, AR(1) {model.ar1:.2f}, {args.steps} steps; {args.sim_pairs} pairs "
          "each):")  # fmt: skip
    for repeats in (5, 10):
        aa = detection(model, model, repeats, args.steps, args.sim_pairs, rng)
        found = None
        curve = []
        for pct in range(2, 101, 2):
            slower = StepModel(model.step_ms * (1 + pct / 100), model.process_cv_pct, model.step_cv_pct, model.ar1)
            rate = detection(model, slower, repeats, args.steps, args.sim_pairs, rng)
            curve.append(f"{pct}%: {rate:.0%}")
            if rate >= 0.8:
                found = pct
                break
        print(f"  {repeats} repeats: A/A called different {aa:.1%}; smallest slowdown found in 80% of pairs: "
              f"{found if found is not None else '>100'}%  ({', '.join(curve[-4:])})")  # fmt: skip


def real_power(model: StepModel, args: argparse.Namespace, store: str) -> None:
    """Fake-backend trials in real processes, B slowed by a known delay, A and B repeats interleaved."""
    print(f"power, real fake-backend trials ({args.power_pairs} pairs per delay, 5 repeats a side, interleaved):")
    from edgebench.workflows.trial import TrialRequest, run_trial

    settings = {"model": "lenet", "backend": "fake", "steps": args.steps, "warmup": 2, "idle_s": 0.0,
                "infer_steps": 0}  # fmt: skip
    for delay in args.delays:
        hits = 0
        for _ in range(args.power_pairs):
            sides: dict[str, list[TrialResult]] = {"a": [], "b": []}
            for _ in range(5):
                for side, scale in (("a", 1.0), ("b", 1 + delay / 100)):
                    os.environ[STEP_MS_ENV] = f"{model.step_ms * scale:.4f}"
                    sides[side].append(run_trial(TrialRequest(settings, no_store=True)).result)
            found = decide(sides["a"], sides["b"], args.keep_disturbed)
            hits += bool(found.significant) and found.direction == "slower"
        print(f"  +{delay:g}%: found slower in {hits}/{args.power_pairs}", flush=True)
    os.environ[STEP_MS_ENV] = f"{model.step_ms:.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--parts", default="spread,fake,lenet,power", help="comma-separated: spread, fake, lenet, power"
    )
    parser.add_argument("--spread-trials", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=40, help="A/A pairs of fake-backend trials")
    parser.add_argument("--lenet-pairs", type=int, default=40, help="A/A pairs of torch LeNet trials")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--process-cv", type=float, help="the fake backend's per-process spread (%%) instead")
    parser.add_argument("--step-cv", type=float, help="the fake backend's step spread (%%)")
    parser.add_argument("--ar1", type=float, help="the fake backend's step autocorrelation")
    parser.add_argument("--step-ms", type=float, default=None, help="the fake backend's step (ms)")
    parser.add_argument("--sim-pairs", type=int, default=1000)
    parser.add_argument("--power-pairs", type=int, default=10)
    parser.add_argument("--delays", type=float, nargs="*", default=[10.0, 20.0, 40.0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--keep-disturbed",
        action="store_true",
        help="decide on disturbed repeats too (a busy machine: what the test does with its noise)",
    )
    parser.add_argument("--store", default=None, help="keep the trials in this store (default: a temporary one)")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    import tempfile

    folder = tempfile.mkdtemp(prefix="edgebench-aa-")
    store = args.store or os.path.join(folder, "aa.sqlite")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start; trials in {store}")
    model = StepModel(step_ms=6.0, process_cv_pct=12.0, step_cv_pct=6.0, ar1=0.5)  # what five LeNet processes gave
    if "spread" in parts:
        model = measure_spread(args, store)
    model = StepModel(args.step_ms or model.step_ms,
                      model.process_cv_pct if args.process_cv is None else args.process_cv,
                      model.step_cv_pct if args.step_cv is None else args.step_cv,
                      model.ar1 if args.ar1 is None else args.ar1)  # fmt: skip
    os.environ.update({STEP_MS_ENV: f"{model.step_ms:.4f}", PROCESS_CV_ENV: f"{model.process_cv_pct:.3f}",
                       STEP_CV_ENV: f"{model.step_cv_pct:.3f}", AR1_ENV: f"{model.ar1:.3f}"})  # fmt: skip
    print(f"fake backend: {model.step_ms:.2f} ms steps, processes {model.process_cv_pct:.1f}% apart (log-normal), "
          f"steps {model.step_cv_pct:.1f}% about their level, AR(1) {model.ar1:.2f}")  # fmt: skip
    fake = {"model": "lenet", "backend": "fake", "steps": args.steps, "warmup": 2}
    if "fake" in parts:
        aa_pairs("fake A/A", fake, args.pairs, args, store, args.seed)
    if "lenet" in parts:
        lenet = {"model": "lenet", "batch_size": args.batch, "threads": 1, "steps": args.steps, "warmup": args.warmup}
        aa_pairs("LeNet A/A", lenet, args.lenet_pairs, args, store, args.seed + 1)
    if "power" in parts:
        power_curve(model, args)
        real_power(model, args, store)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
