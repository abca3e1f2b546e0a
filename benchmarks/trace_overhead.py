"""Does ``--trace layers`` slow training down?  Target: median step time at most 5% higher (ratio <= 1.05).

For each model (default lenet, mobilenet_v2, resnet50; models this checkout does not have are skipped with a
note), two figures, each with the two configurations interleaved in one run:

- trials: edgebench's median step with ``--trace layers`` over without, each a fresh worker process as a user
  runs it.  Identical processes differ by tens of percent on a shared VM, so the interval can be wide.
- in-process: one process, alternating short blocks of steps with the tracer recording and with it removed
  (many blocks, so a load that changes over minutes hits both sides alike); the same ratio without the
  process-to-process noise, the median of the per-pair ratios, the ratio of process CPU time per step (which a
  busy machine inflates less than wall time), and the absolute time the tracer adds per step.

Run: ``python benchmarks/trace_overhead.py [--models lenet mobilenet_v2] [--rounds 8] [--steps 20]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _common import interleave, ratio_line
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial
from edgebench.registry import MODELS

DEFAULT_BATCH = {"lenet": 32}


def trial_figures(model: str, batch: int, shape: tuple[int, ...] | None, args: argparse.Namespace) -> None:
    base = Trial(model=model, batch_size=batch, steps=args.steps, warmup=args.warmup, infer_steps=0,
                 input_shape=shape, threads=args.threads)  # fmt: skip

    def run(trace: str) -> float:
        result = run_trial(base.model_copy(update={"trace": trace})).result
        assert result.ok, result.reason
        return result.latency.step_ms.median

    figures = interleave(args.rounds, {"layers": lambda: run("layers"), "none": lambda: run("none")})
    print(ratio_line(f"{model} b{batch} trials: median step traced / untraced", figures["layers"], figures["none"],
                     "<= 1.05"))  # fmt: skip


def in_process_figures(model: str, batch: int, shape: tuple[int, ...] | None, args: argparse.Namespace) -> None:
    import torch

    from edgebench.backends.torch.tracing.layers import LayerTracer
    from edgebench.workloads import get_workload

    cores = sorted(os.sched_getaffinity(0))[: args.threads]
    os.sched_setaffinity(0, cores)
    torch.set_num_threads(args.threads)
    session = get_workload(model).session(batch, input_shape=shape)
    tracer = LayerTracer(session.model)
    for _ in range(args.warmup):
        session.train_step()
    cpu_ms: dict[str, list[float]] = {"layers": [], "none": []}

    def block(name: str) -> float:
        wall, cpu = [], []
        for _ in range(args.block_steps):
            c0, t0 = time.process_time_ns(), time.perf_counter_ns()
            session.train_step()
            wall.append((time.perf_counter_ns() - t0) / 1e6)
            cpu.append((time.process_time_ns() - c0) / 1e6)
        cpu_ms[name].append(statistics.median(cpu))
        return statistics.median(wall)

    def traced() -> float:
        tracer.install()
        tracer.start()
        try:
            return block("layers")
        finally:
            tracer.stop()
            tracer.remove()
            tracer.clear()

    figures = interleave(args.blocks, {"layers": traced, "none": lambda: block("none")})
    label = f"{model} b{batch} in-process ({args.blocks} x {args.block_steps} steps)"
    print(ratio_line(f"{label}: median step traced / untraced", figures["layers"], figures["none"], "<= 1.05"))
    print(paired_line(f"{label}: paired ratio", figures["layers"], figures["none"]))
    print(ratio_line(f"{label}: process CPU time per step traced / untraced", cpu_ms["layers"], cpu_ms["none"],
                     "<= 1.05"))  # fmt: skip
    added_ms = statistics.median(figures["layers"]) - statistics.median(figures["none"])
    print(f"{label}: the tracer adds {added_ms * 1e3:.0f} us per step (difference of medians)")


def paired_line(label: str, a: list[float], b: list[float], n_boot: int = 10_000) -> str:
    """Median of the per-round ratios a/b, with a 95% bootstrap interval over rounds (pairs stay together).

    Adjacent blocks share the machine's load at that moment, so pairing cancels load that drifts over minutes.
    """
    import numpy as np

    ratios = np.asarray(a) / np.asarray(b)
    rng = np.random.default_rng(0)
    boot = np.median(ratios[rng.integers(0, len(ratios), (n_boot, len(ratios)))], axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return f"{label}: {np.median(ratios):.4f} (95% CI {lo:.3f}-{hi:.3f}; target <= 1.05; {len(ratios)} pairs)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["lenet", "mobilenet_v2", "resnet50"])
    parser.add_argument("--rounds", type=int, default=8, help="trials per configuration")
    parser.add_argument("--steps", type=int, default=20, help="measured steps per trial")
    parser.add_argument("--blocks", type=int, default=60, help="in-process blocks per configuration")
    parser.add_argument("--block-steps", type=int, default=3, help="steps per in-process block")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch-size", type=int, help="for every model [default: 32 for lenet, 8 for the others]")
    parser.add_argument("--input-shape", help="per-sample input for every model but lenet, e.g. 3x112x112")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--only", choices=("trials", "in-process"), help="run one of the two figures")
    args = parser.parse_args()
    for model in args.models:
        if model not in MODELS:
            print(f"{model}: not in this checkout's model registry; skipped")
            continue
        name = MODELS.canonical(model)
        batch = args.batch_size or DEFAULT_BATCH.get(name, 8)
        shape = None
        if args.input_shape and name != "lenet":
            shape = tuple(int(x) for x in args.input_shape.lower().split("x"))
        if args.only != "in-process":
            trial_figures(name, batch, shape, args)
        if args.only != "trials":
            in_process_figures(name, batch, shape, args)


if __name__ == "__main__":
    main()
