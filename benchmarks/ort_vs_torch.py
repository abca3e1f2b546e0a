"""ONNX Runtime fp32 / int8 vs PyTorch inference: median forward-pass latency and peak memory, as ratios.

For each model (default lenet, mobilenet_v2, resnet50 at their default inputs), four configurations run as whole
edgebench trials (``--mode infer``, a fresh worker each, as a user runs them), interleaved round by round so that
drift of a shared machine hits all alike: torch fp32, torch int8 (torch.ao static), onnxruntime fp32 and
onnxruntime int8 (QDQ static).  Printed: each ratio of medians with its 95% interval over the rounds, and the CPU's
int8 features (without VNNI / dot-product instructions int8 need not be faster; the figures say whether it is).

``--mnn`` adds MNN fp32 and MNN int8 (its post-training quantizer) to the interleaved configurations.

Run: ``python benchmarks/ort_vs_torch.py [--models lenet resnet50] [--rounds 5] [--steps 30] [--batch-size 1]
[--mnn]``; ``--quick`` checks that it runs (small inputs, one round, 3 steps): its figures mean nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from _common import interleave, ratio_line
from edgebench.host.cpu import int8_cpu_features
from edgebench.host.sysfs import SysFS
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial

CONFIGS = {
    "torch fp32": ("torch", "fp32"),
    "torch int8": ("torch", "int8"),
    "ort fp32": ("onnxruntime", "fp32"),
    "ort int8": ("onnxruntime", "int8"),
}
MNN_CONFIGS = {"mnn fp32": ("mnn", "fp32"), "mnn int8": ("mnn", "int8")}
#: (numerator, denominator, target) of each printed ratio.
RATIOS = (
    ("ort fp32", "torch fp32", "< 1: ORT faster"),
    ("ort int8", "ort fp32", "< 1: int8 pays off on ORT"),
    ("torch int8", "torch fp32", "< 1: int8 pays off on torch"),
    ("ort int8", "torch fp32", "the best of ORT vs plain PyTorch"),
)
MNN_RATIOS = (
    ("mnn fp32", "torch fp32", "< 1: MNN faster"),
    ("mnn int8", "mnn fp32", "< 1: int8 pays off on MNN"),
)
QUICK_SHAPES = {"lenet": None, "mobilenet_v2": (3, 32, 32), "resnet50": (3, 32, 32)}


def bench_model(model: str, shape: tuple[int, ...] | None, args: argparse.Namespace) -> None:
    configs = {**CONFIGS, **(MNN_CONFIGS if args.mnn else {})}
    ratios = RATIOS + (MNN_RATIOS if args.mnn else ())
    base = Trial(model=model, mode="infer", batch_size=args.batch_size, steps=args.steps, warmup=args.warmup,
                 infer_steps=0, input_shape=shape, threads=args.threads)  # fmt: skip
    memory: dict[str, list[float]] = {name: [] for name in configs}

    def runner(name: str) -> Callable[[], float]:
        backend, precision = configs[name]

        def run() -> float:
            result = run_trial(base.model_copy(update={"backend": backend, "precision": precision})).result
            assert result.ok and result.latency.step_ms is not None, f"{name}: {result.status}: {result.reason}"
            memory[name].append(float(result.memory.peak_bytes or 0) / 2**20)
            return result.latency.step_ms.median

        return run

    print(f"{model} batch {args.batch_size} input {shape or 'default'}:", flush=True)
    latency = interleave(args.rounds, {name: runner(name) for name in configs})
    for numerator, denominator, target in ratios:
        print(ratio_line(f"{model} latency {numerator} / {denominator}", latency[numerator], latency[denominator],
                         target))  # fmt: skip
    for name in [c for c in configs if c != "torch fp32"]:
        print(ratio_line(f"{model} peak memory {name} / torch fp32", memory[name], memory["torch fp32"],
                         "< 1: less memory"))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(QUICK_SHAPES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--mnn", action="store_true", help="also MNN fp32 and int8")
    parser.add_argument("--quick", action="store_true", help="check that it runs: small inputs, 1 round, 3 steps")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.steps, args.warmup = 1, 3, 1
    features = int8_cpu_features(SysFS("/"))
    print(f"CPU int8 features: {', '.join(features) or 'none (no VNNI / dot product)'}")
    for model in args.models:
        bench_model(model, QUICK_SHAPES.get(model) if args.quick else None, args)


if __name__ == "__main__":
    main()
