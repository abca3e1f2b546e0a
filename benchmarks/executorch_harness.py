"""Does edgebench's ExecuTorch backend report what a hand-written loop on the same runtime would see?

Compares the median step of an edgebench trial (``--backend executorch``: worker process, sampler on, events per
step) with a plain loop in its own fresh process over the very program the trial ran (the cached ``.pte``),
written the way ExecuTorch documents it: ``executorch.runtime``'s ``Runtime.load_program`` and ``Method.execute``
to infer, ``executorch.extension.training``'s ``TrainingModule`` and ``get_sgd_optimizer`` to train; same threads,
same cores, same batch.  Target: within 2%.  The two configurations are interleaved round by round; the ratio of
medians comes with a bootstrap interval over the rounds (step times of identical processes differ by tens of
percent on a shared VM).

Run: ``python benchmarks/executorch_harness.py [--mode infer|train|both] [--rounds N] [--steps N]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from _common import interleave, ratio_line
from edgebench.graph.cache import cache_dir
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial

PLAIN_INFER = r"""
import os, statistics, sys, time
os.sched_setaffinity(0, {cores})
import torch
from executorch.extension.pybindings import portable_lib
portable_lib._unsafe_reset_threadpool({threads})
from executorch.runtime import Runtime
method = Runtime.get().load_program({path!r}).load_method("forward")
x = torch.randn({shape})
times = []
for i in range({warmup} + {steps}):
    t0 = time.perf_counter_ns()
    method.execute((x,))
    t1 = time.perf_counter_ns()
    if i >= {warmup}:
        times.append((t1 - t0) / 1e6)
print(statistics.median(times))
"""

PLAIN_TRAIN = r"""
import os, statistics, sys, time
os.sched_setaffinity(0, {cores})
import torch
from executorch.extension.pybindings import portable_lib
portable_lib._unsafe_reset_threadpool({threads})
from executorch.extension.training import _load_for_executorch_for_training_from_buffer, get_sgd_optimizer
data = open({path!r}, "rb").read()
module = _load_for_executorch_for_training_from_buffer(data)
x, y = torch.randn({shape}), torch.randint(0, 10, ({batch},))
optimizer = None
times = []
for i in range({warmup} + {steps}):
    t0 = time.perf_counter_ns()
    loss = module.forward_backward("forward", (x, y))[0]
    if optimizer is None:
        optimizer = get_sgd_optimizer(module.named_parameters(), 0.01, 0.9, 0.0, 5e-4, False)
    optimizer.step(module.named_gradients())
    t1 = time.perf_counter_ns()
    float(loss)
    if i >= {warmup}:
        times.append((t1 - t0) / 1e6)
print(statistics.median(times))
"""


def compare(mode: str, rounds: int, steps: int, threads: int, batch: int) -> None:
    cores = sorted(os.sched_getaffinity(0))[:threads]
    trial = Trial(model="lenet", backend="executorch", mode=mode, batch_size=batch, threads=threads,
                  cores=tuple(cores), steps=steps, warmup=5, infer_steps=0, idle_s=0)  # fmt: skip

    def edgebench() -> float:
        result = run_trial(trial).result
        assert result.ok, result.reason
        compare.program = result.device.extra["executorch_program"]  # type: ignore[attr-defined]
        return result.latency.step_ms.median

    edgebench()  # lowers (cached) and names the program both sides run
    path = str(cache_dir("executorch") / compare.program)  # type: ignore[attr-defined]
    shape = ", ".join(map(str, (batch, 1, 28, 28)))
    script = (PLAIN_INFER if mode == "infer" else PLAIN_TRAIN).format(
        cores=cores, threads=threads, path=path, shape=shape, batch=batch, warmup=5, steps=steps
    )

    def plain() -> float:
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])

    figures = interleave(rounds, {"edgebench": edgebench, "plain": plain})
    label = f"lenet b{batch} {mode}: edgebench median step / plain ExecuTorch loop"
    print(ratio_line(label, figures["edgebench"], figures["plain"], "0.98-1.02"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=("infer", "train", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=200, help="measured steps to infer (training: a tenth)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    for mode in ("infer", "train") if args.mode == "both" else (args.mode,):
        steps = args.steps if mode == "infer" else max(5, args.steps // 10)
        compare(mode, args.rounds, steps, args.threads, batch=1 if mode == "infer" else 8)


if __name__ == "__main__":
    main()
