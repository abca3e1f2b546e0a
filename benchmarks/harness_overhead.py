"""Does edgebench report what a plain training loop would see?

Compares edgebench's median step time (worker process, sampler on, events per step) with a hand-written PyTorch
loop of the same model, batch, optimizer and thread count in its own fresh process; target within 2%.

Step times of identical processes can differ by tens of percent on a shared VM, so the ratio comes with a
bootstrap interval; the script also measures, in one process and free of that noise, the time edgebench's step
bookkeeping adds per step (the timed call, the clock reads, the event written after each step).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from _common import interleave, ratio_line
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial

PLAIN_LOOP = r"""
import os, statistics, sys, time
os.sched_setaffinity(0, {cores})
import torch
import torch.nn.functional as F
from edgebench.zoo.lenet import LeNet

torch.set_num_threads({threads})
torch.manual_seed(0)
model = LeNet(10, (1, 28, 28)).train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: (1 + 1e-4 * s) ** -0.75)
x, y = torch.randn({batch}, 1, 28, 28), torch.randint(0, 10, ({batch},))
times = []
for i in range({warmup} + {steps}):
    t0 = time.perf_counter_ns()
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    scheduler.step()
    t1 = time.perf_counter_ns()
    loss.item()
    if i >= {warmup}:
        times.append((t1 - t0) / 1e6)
print(statistics.median(times))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=16)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))[: args.threads]
    trial = Trial(model="lenet", batch_size=args.batch_size, threads=args.threads, cores=tuple(cores),
                  steps=args.steps, warmup=10, infer_steps=0)  # fmt: skip
    script = PLAIN_LOOP.format(cores=cores, threads=args.threads, batch=args.batch_size, warmup=10, steps=args.steps)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))

    def edgebench() -> float:
        result = run_trial(trial).result
        assert result.ok, result.reason
        return result.latency.step_ms.median

    def plain() -> float:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        return float(out.stdout.strip().splitlines()[-1])

    figures = interleave(args.rounds, {"edgebench": edgebench, "plain": plain})
    print(ratio_line("edgebench median step / plain loop", figures["edgebench"], figures["plain"], "0.98-1.02"))
    added_us = bookkeeping_us_per_step()
    share = added_us / 1e3 / statistics.median(figures["plain"])
    print(f"bookkeeping edgebench adds per step: {added_us:.1f} us = {share:.3%} of the plain median step")


def bookkeeping_us_per_step(n: int = 20_000) -> float:
    """Wall time per step of edgebench's timed loop around a no-op step, minus a bare loop around the same."""
    from edgebench.agents.python.stopping import FixedSteps
    from edgebench.agents.python.worker import timed
    from edgebench.records.events import EventWriter

    def step() -> None:
        return None

    with open(os.devnull, "w", buffering=1) as sink:
        emit = EventWriter(sink)
        t0 = time.perf_counter_ns()
        timed(step, FixedSteps(n), "train", emit, lambda: None)
        harness = time.perf_counter_ns() - t0
    t0 = time.perf_counter_ns()
    for _ in range(n):
        step()
    bare = time.perf_counter_ns() - t0
    return (harness - bare) / n / 1e3


if __name__ == "__main__":
    main()
