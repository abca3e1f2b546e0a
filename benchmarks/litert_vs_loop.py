"""Does the litert backend report what a plain LiteRT loop would see?

Compares edgebench's median inference step on the litert backend (a whole `--mode infer` trial: worker process,
sampler on, an event per step) with a hand-written loop over the same ``.tflite`` file in a fresh process: the same
``ai_edge_litert.interpreter.Interpreter``, threads, cores and input, each step setting the input, invoking and
reading the output, as the backend's step does; target within 2%.  The trials and the loops are interleaved round
by round; the first trial of each model converts it (cached after), before the rounds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from _common import interleave, ratio_line
from edgebench.graph.cache import cache_dir
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial

PLAIN_LOOP = r"""
import os, statistics, time
os.sched_setaffinity(0, {cores})
import numpy as np
from ai_edge_litert.interpreter import Interpreter
from edgebench.backends.litert.prepare import to_model_input

interpreter = Interpreter(model_path={path!r}, num_threads={threads})
interpreter.allocate_tensors()
inp = interpreter.get_input_details()[0]
out = interpreter.get_output_details()[0]["index"]
x = to_model_input(np.random.default_rng(0).standard_normal(inp["shape"], dtype=np.float32), inp)
times = []
for i in range({warmup} + {steps}):
    t0 = time.perf_counter_ns()
    interpreter.set_tensor(inp["index"], x)
    interpreter.invoke()
    interpreter.get_tensor(out)
    t1 = time.perf_counter_ns()
    if i >= {warmup}:
        times.append((t1 - t0) / 1e6)
print(statistics.median(times))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default="lenet,mobilenet_v2", help="comma-separated zoo models")
    parser.add_argument("--input-shape", default=None, help="per-sample input, e.g. 3x64x64 (default: each model's)")
    parser.add_argument("--precision", default="fp32", choices=("fp32", "fp16", "int8", "int8-dynamic"))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))[: args.threads]
    shape = tuple(int(d) for d in args.input_shape.split("x")) if args.input_shape else None
    for model in args.models.split(","):
        trial = Trial(model=model, backend="litert", mode="infer", precision=args.precision, batch_size=1,
                      input_shape=shape, threads=args.threads, cores=tuple(cores), steps=args.steps, warmup=20,
                      idle_s=0)  # fmt: skip
        first = run_trial(trial).result  # converts the model (once: cached)
        assert first.ok, first.reason
        path = cache_dir("litert") / first.device.extra["litert_model"]
        script = PLAIN_LOOP.format(cores=cores, threads=args.threads, path=str(path), warmup=20, steps=args.steps)

        def edgebench(trial: Trial = trial) -> float:
            result = run_trial(trial).result
            assert result.ok, result.reason
            return result.latency.step_ms.median

        def plain(script: str = script) -> float:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[1] / "src"), *sys.path]))
            done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
            return float(done.stdout.strip().splitlines()[-1])

        print(f"{model} {args.precision} batch 1, {args.threads} thread(s), {path.name}")
        figures = interleave(args.rounds, {"edgebench": edgebench, "plain": plain})
        print(ratio_line(f"{model}: edgebench median step / plain LiteRT loop", figures["edgebench"],
                         figures["plain"], "0.98-1.02"))  # fmt: skip


if __name__ == "__main__":
    main()
