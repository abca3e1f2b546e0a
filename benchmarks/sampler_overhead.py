"""Does the sampler slow training down?  LeNet, batch 32, 2 threads, with the 10 ms sampler vs without.

Prints the ratio of median step times (target <= 1.01) and the sampler's own CPU use in percent of one core
(target <= 1%), both measured in this run with the two configurations interleaved, then the floor under
any sampler at that period here: a bare loop that only wakes, and one that wakes and reads /proc/stat.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _common import interleave, ratio_line
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial


def wake_floor_pct(interval_ms: float, seconds: float = 5.0, read_stat: bool = False) -> float:
    """CPU in percent of a core of a bare loop that only sleeps to each deadline (and, if asked, preads /proc/stat).

    The floor under any Python sampler at this period on this machine: what the kernel and interpreter charge for a
    wake-up, and what generating /proc/stat costs (kernel side; it grows with the number of IRQs and cores).
    """
    fd = os.open("/proc/stat", os.O_RDONLY)
    period_ns, cpu0, t0 = int(interval_ms * 1e6), time.process_time(), time.perf_counter_ns()
    deadline = t0
    try:
        while time.perf_counter_ns() - t0 < seconds * 1e9:
            if read_stat:
                os.pread(fd, 4096, 0)
            deadline += period_ns
            time.sleep(max(0.0, (deadline - time.perf_counter_ns()) / 1e9))
    finally:
        os.close(fd)
    return 100.0 * (time.process_time() - cpu0) / ((time.perf_counter_ns() - t0) / 1e9)


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
        return result.latency.step_ms.median

    def without_sampler() -> float:
        result = run_trial(trial, sample=False).result
        assert result.ok, result.reason
        return result.latency.step_ms.median

    figures = interleave(args.rounds, {"sampler": with_sampler, "none": without_sampler})
    print(ratio_line(f"step time with {args.interval_ms:g} ms sampler / without", figures["sampler"],
                     figures["none"], "<= 1.01"))  # fmt: skip
    print(f"sampler CPU: {statistics.median(sampler_cpu):.2f}% of one core (median; max {max(sampler_cpu):.2f}%;"
          " target <= 1%)")  # fmt: skip
    sleep_only = wake_floor_pct(args.interval_ms)
    with_stat = wake_floor_pct(args.interval_ms, read_stat=True)
    print(f"floor at {args.interval_ms:g} ms on this machine: waking alone {sleep_only:.2f}% of a core, waking and"
          f" reading /proc/stat {with_stat:.2f}% (a bare loop, 5 s each, after the trials)")  # fmt: skip


if __name__ == "__main__":
    main()
