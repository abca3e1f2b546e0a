"""MNN vs PyTorch training: step time and peak memory for the MNN-based suite's five models.

Each round runs one training trial per backend and model through the real worker (``run_trial``), the two
backends alternating their order every round; a trial's step time is its median measured step, its peak memory the
worker's peak resident set over the measured steps (VmHWM).  Printed as MNN / PyTorch ratios of medians with a
bootstrap interval over the rounds.

Batch: 32 for LeNet (1x28x28) as in the suite; the 224x224 models at ``--batch`` (default 8, what fits a 2-core,
23 GiB development machine next to other work; the suite's 32 needs several GiB per model for PyTorch).

Run: ``python benchmarks/mnn_vs_torch.py [--quick] [--rounds 3] [--steps 10] [--threads 2] [--batch 8]
[--models lenet,mobilenet_v2]``.
``--quick`` checks the script (LeNet at batch 8 and SqueezeNet at 3x64x64, batch 2, one round, 2 steps).
"""

from __future__ import annotations

import argparse
import statistics

from _common import interleave, ratio_line
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial

SUITE = ("lenet", "googlenet", "squeezenet", "alexnet", "mobilenet_v2")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8, help="batch of the 224x224 models")
    parser.add_argument("--models", default=",".join(SUITE), help="a subset of the suite, comma-separated")
    args = parser.parse_args()
    if args.quick:
        configs = [("lenet", 8, None), ("squeezenet", 2, (3, 64, 64))]
        rounds, steps = 1, 2
    else:
        chosen = [m for m in SUITE if m in args.models.split(",")]
        configs = [(m, 32 if m == "lenet" else args.batch, None) for m in chosen]
        rounds, steps = args.rounds, args.steps
    lines = []
    for model, batch, shape in configs:
        memory: dict[str, list[float]] = {"mnn": [], "torch": []}

        def trial_run(
            backend: str,
            model: str = model,
            batch: int = batch,
            shape: tuple | None = shape,
            memory: dict[str, list[float]] = memory,
        ):
            def run() -> float:
                trial = Trial(
                    model=model,
                    backend=backend,
                    batch_size=batch,
                    input_shape=shape,
                    steps=steps,
                    warmup=2,
                    threads=args.threads,
                    infer_steps=0,
                )
                result = run_trial(trial).result
                assert result.ok, f"{backend} {model}: {result.reason}"
                memory[backend].append(float(result.memory.peak_bytes or 0) / 2**20)
                return result.latency.step_ms.median

            return run

        print(f"{model} batch {batch}{' input ' + 'x'.join(map(str, shape)) if shape else ''}:", flush=True)
        times = interleave(rounds, {"mnn": trial_run("mnn"), "torch": trial_run("torch")})
        what = f"{model} b{batch}"
        lines.append(ratio_line(f"{what} step time MNN/PyTorch", times["mnn"], times["torch"], "none (measured)"))
        mnn_mib, torch_mib = statistics.median(memory["mnn"]), statistics.median(memory["torch"])
        lines.append(
            f"{what} peak memory MNN/PyTorch: {mnn_mib / torch_mib:.3f} (medians {mnn_mib:.0f} / {torch_mib:.0f} MiB)"
        )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
