"""Does the sampler slow training down?  LeNet, batch 32, 2 threads, with the 10 ms sampler vs without.

Prints the ratio of median step times (target <= 1.01) and the sampler's own CPU use in percent of one core
(target <= 1%), both measured in this run with the two configurations interleaved.
"""

from __future__ import annotations

import argparse
import statistics

from _common import interleave, ratio_line
from edgebench.runner.local import run_trial
from edgebench.trial import Trial


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--interval-ms", type=float, default=10.0)
    args = parser.parse_args()
    trial = Trial(model="lenet", batch_size=32, threads=2, steps=args.steps, warmup=10, infer_steps=0,
                  sample_interval_ms=args.interval_ms)  # fmt: skip
    sampler_cpu: list[float] = []

    def with_sampler() -> float:
        result = run_trial(trial, sample=True).result
        assert result.ok and result.sampler, result.reason
        sampler_cpu.append(result.sampler.cpu_pct_of_core)
        return result.step_time_ms.median

    def without_sampler() -> float:
        result = run_trial(trial, sample=False).result
        assert result.ok, result.reason
        return result.step_time_ms.median

    figures = interleave(args.rounds, {"sampler": with_sampler, "none": without_sampler})
    print(ratio_line(f"step time with {args.interval_ms:g} ms sampler / without", figures["sampler"],
                     figures["none"], "<= 1.01"))  # fmt: skip
    print(f"sampler CPU: {statistics.median(sampler_cpu):.2f}% of one core (median; max {max(sampler_cpu):.2f}%;"
          " target <= 1%)")  # fmt: skip


if __name__ == "__main__":
    main()
