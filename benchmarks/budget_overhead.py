"""Does holding a trial to a memory budget slow training down?  LeNet, batch 32, 2 threads, with and without.

With ``--memory-budget`` the worker runs under ``RLIMIT_DATA`` and the launcher polls the worker's memory every
20 ms.  Prints the ratio of median step times (target <= 1.01), measured in this run with the two configurations
interleaved, and the launcher's CPU per poll.
"""

from __future__ import annotations

import argparse
import os
import time

from _common import interleave, ratio_line
from edgebench.agents.python.budget import POLL_S
from edgebench.host.sysfs import SysFS
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial
from edgebench.sensors.process import read_status_kib


def poll_cpu_s(n: int = 2000) -> float:
    sysfs, pid = SysFS("/"), os.getpid()
    start = time.process_time()
    for _ in range(n):
        read_status_kib(sysfs, pid, "VmHWM")
    return (time.process_time() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    plain = Trial(model="lenet", batch_size=32, threads=2, steps=args.steps, warmup=10, infer_steps=0)
    budgeted = plain.model_copy(update={"memory_budget_bytes": 4 * 2**30})

    def median_step(trial: Trial) -> float:
        result = run_trial(trial, sample=False).result
        assert result.ok and result.latency.step_ms, result.reason
        return result.latency.step_ms.median

    figures = interleave(args.rounds, {"budget": lambda: median_step(budgeted), "none": lambda: median_step(plain)})
    print(ratio_line("step time with a memory budget / without", figures["budget"], figures["none"], "<= 1.01"))
    per_poll = poll_cpu_s()
    share = 100 * per_poll / POLL_S
    print(f"launcher CPU per poll: {per_poll * 1e6:.1f} us, {share:.2f}% of one core at {POLL_S * 1e3:g} ms")


if __name__ == "__main__":
    main()
