"""Does ``--target-ci`` give a trustworthy mean quickly, for short noisy steps and long stable ones alike?

For each workload, runs trials with a fixed 20 steps and with ``--target-ci`` (default 2%), interleaved, and
prints per mode: the steps taken, the trial's wall time, and the precision reached (95% CI half-width in % of the
mean).  The fixed rule gives short noisy trials an imprecise mean and long stable ones more steps than they need;
the target rule should reach the target in both, with its own check costing a negligible share of a step
(printed last: microseconds per check between steps, outside the timed region; target <= 1% of a LeNet step).
"""

from __future__ import annotations

import argparse
import statistics
import time

from edgebench.agents.python.stopping import TargetCI
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial

WORKLOADS = {
    # short steps (~ms), noisy on a shared machine
    "lenet b8": dict(model="lenet", batch_size=8),
    # longer steps (~100 ms), steadier
    "squeezenet 3x64x64 b16": dict(model="squeezenet", batch_size=16, input_shape=(3, 64, 64)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--target", type=float, default=2.0, help="target CI half-width, percent of the mean")
    parser.add_argument("--max-time", type=float, default=60.0)
    args = parser.parse_args()
    for name, fields in WORKLOADS.items():
        base = dict(fields, warmup=5, infer_steps=0, threads=2)
        modes = {
            "fixed 20": Trial(**base, steps=20),
            f"target {args.target:g}%": Trial(**base, steps=5, target_ci_pct=args.target, max_time_s=args.max_time),
        }
        figures: dict[str, list[tuple[int, float, float]]] = {m: [] for m in modes}
        for r in range(args.rounds):
            for mode in modes if r % 2 == 0 else reversed(modes):
                t0 = time.monotonic()
                result = run_trial(modes[mode]).result
                assert result.ok and result.latency.step_ms, result.reason
                s = result.latency.step_ms
                figures[mode].append((s.n, time.monotonic() - t0, 100 * s.ci95 / s.mean))
                print(f"  {name} round {r + 1} {mode}: {s.n} steps, ci ±{100 * s.ci95 / s.mean:.2f}%"
                      f" ({result.stopped_by})", flush=True)  # fmt: skip
        for mode, rows in figures.items():
            steps = statistics.median(n for n, _, _ in rows)
            wall = statistics.median(w for _, w, _ in rows)
            ci = [c for _, _, c in rows]
            print(f"{name:>24} | {mode:>10}: median {steps:g} steps, trial wall {wall:.1f} s, "
                  f"ci ±{statistics.median(ci):.2f}% (worst ±{max(ci):.2f}%)")  # fmt: skip
    print(f"target-CI check: {check_cost_us(100):.1f} us at 100 steps, {check_cost_us(1000):.1f} us at 1000 steps")


def check_cost_us(n: int, repeat: int = 2000) -> float:
    """Time of one ``TargetCI.check`` call with ``n`` durations already measured (the rule's cost per step)."""
    import numpy as np

    rule = TargetCI(0.001, min_steps=2, max_steps=n + repeat + 1, max_time_s=1e9)
    durations = list(np.random.default_rng(0).normal(10, 1, n + repeat))
    steps = durations[:n]
    rule.check(steps)
    t0 = time.perf_counter()
    for x in durations[n:]:  # as in the worker: one more step per check
        steps.append(x)
        rule.check(steps)
    return (time.perf_counter() - t0) / repeat * 1e6


if __name__ == "__main__":
    main()
