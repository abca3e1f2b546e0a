"""What the device-side samplers of ``--command`` trials cost: CPU per period, sampler and shell, and the step time.

1. The sampler's own CPU in percent of one core at 10, 50 and 100 ms, reading the files the local sensors read on
   this machine (``/``) and on the Android phone fixture tree (19 files: per-core clocks, thermal zones, battery):
   - the native sampler (``agents/native/sampler.c``, the x86-64 build): the binary run as the script runs it, with
     the same arguments beside a running workload, its CPU from ``wait4(2)`` (to the microsecond);
   - the sh loop under ``mksh``, ``busybox sh`` (and ``dash``): a whole ``--command`` trial, the loop's process with
     the ``sleep`` children it reaped, read from ``/proc/self/stat`` as it stops (to the 10 ms tick).
   Targets for the native sampler: <= 1% of a core at 10 ms, <= 0.3% at 100 ms.
2. The median step time of a CPU-bound command workload with the 10 ms sampler over without it, native and mksh,
   interleaved (A, B, C, A, ...).  Target: 1.00 +/- 0.02.

``--quick`` checks that it runs (short runs, two rounds); figures for the docs come from a full run on a quiet machine.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import interleave, ratio_line
from edgebench.agents.native.build import built
from edgebench.agents.sh.native import SamplerChoice
from edgebench.agents.sh.run import plan_sampler, run_command_trial
from edgebench.host.sysfs import SysFS
from edgebench.records.trial import Trial
from edgebench.targets.shell import LocalShell

SHELLS = {"mksh": ("mksh",), "busybox sh": ("busybox", "sh"), "dash": ("dash",)}
PHONE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sysfs" / "android_phone"
#: A CPU-bound step of about 20 ms here, printing the line that ends it.
WORKLOAD = (
    "python3 -c 'import sys\nfor i in range({n}):\n    s = sum(range(400000))\n    print(\"step\", i, flush=True)'"
)
PERIODS_MS = (10, 50, 100)


def native_cost_pct(binary: Path, interval_ms: float, seconds: float, tree: Path | None) -> float:
    """The native sampler's CPU over ``seconds`` of sampling, in % of one core: run with the arguments
    ``sampler.sh`` gives it, in a run folder whose ``wpid`` names a live workload, stopped as the script stops it."""
    plan = plan_sampler(SysFS(tree or "/"), interval_ms)
    sources = [f"{s.path}:{s.max_bytes}:{every}" for s, (_, _, every) in zip(plan.sources, plan._files, strict=True)]
    workload = subprocess.Popen(["sleep", str(seconds + 30)])
    try:
        with tempfile.TemporaryDirectory(prefix="edgebench-bench-") as work:
            Path(work, "wpid").write_text(f"{workload.pid}\n")
            with open(Path(work, "samples"), "wb") as records:
                args = [str(binary), "epochrealtime", f"{interval_ms:g}", str(tree or ""), str(os.getpid()), *sources]
                sampler = subprocess.Popen(args, cwd=work, stdout=records)
                start = time.monotonic()
                time.sleep(seconds)
                sampler.send_signal(signal.SIGTERM)
                _, status, usage = os.wait4(sampler.pid, 0)
                wall_s = time.monotonic() - start
                sampler.returncode = os.waitstatus_to_exitcode(status)
    finally:
        workload.kill()
        workload.wait()
    assert sampler.returncode == 0, f"the native sampler exited with {sampler.returncode}"
    return 100.0 * (usage.ru_utime + usage.ru_stime) / wall_s


def sh_cost_pct(shell: tuple[str, ...], interval_ms: float, seconds: float, tree: Path | None) -> float:
    trial = Trial(command=f"sleep {seconds}; echo step", step_pattern="step", model="idle", steps=1, warmup=0,
                  sample_interval_ms=interval_ms, threads=1, cores=(0,), idle_s=0)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="edgebench-bench-") as work:
        bundle = run_command_trial(trial, LocalShell(shell, workdir=work), sysfs=SysFS(tree or "/"),
                                   root=str(tree) if tree else "")  # fmt: skip
    assert bundle.sampler_meta is not None and bundle.sampler_meta.kind == "sh", bundle.failure
    return bundle.sampler_meta.cpu_pct_of_core


def median_step_ms(steps: int, native: Path | None, sample: bool = True) -> float:
    """The median step of the CPU-bound workload, under mksh, with the native sampler, the sh loop, or none."""
    trial = Trial(command=WORKLOAD.format(n=steps + 3), step_pattern=r"^step \d+", model="busy", steps=steps,
                  warmup=3, sample_interval_ms=10, threads=1, cores=(0,), idle_s=0)  # fmt: skip
    choice = SamplerChoice("native", "benchmark", str(native)) if native else None
    with tempfile.TemporaryDirectory(prefix="edgebench-bench-") as work:
        bundle = run_command_trial(trial, LocalShell(SHELLS["mksh"], workdir=work), sysfs=SysFS("/"), sample=sample,
                                   sampler_choice=choice)  # fmt: skip
    assert bundle.failure is None, bundle.failure
    if sample:
        assert bundle.sampler_meta is not None and bundle.sampler_meta.kind == ("native" if native else "sh")
    ms = [(e.end_ns - e.start_ns) / 1e6 for e in bundle.events if e.event == "step" and e.phase == "train"]
    return statistics.median(ms)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, two rounds: check that it runs")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of the step-time part (default 5)")
    parser.add_argument("--steps-only", action="store_true", help="only the step-time part (2.)")
    args = parser.parse_args()
    seconds, rounds, steps = (1.0, 2, 10) if args.quick else (10.0, 5, 100)
    rounds = args.rounds or rounds
    binary = built("x86_64")
    cpus = os.cpu_count()
    load = os.getloadavg()[0]
    print(f"sampler CPU, % of one core ({seconds:g} s per figure; {cpus} cores, load average {load:.2f}):")
    print(f"  {'sampler':22s} {'files of':13s} " + "   ".join(f"{ms:>3d} ms" for ms in PERIODS_MS))
    trees = (("this machine", None), ("phone fixture", PHONE))
    for tree_name, tree in () if args.steps_only else trees:
        figures = [native_cost_pct(binary, ms, seconds, tree) for ms in PERIODS_MS]
        print(f"  {'native (x86-64 build)':22s} {tree_name:13s} " + "   ".join(f"{f:5.2f}%" for f in figures),
              flush=True)  # fmt: skip
    for name, shell in () if args.steps_only else SHELLS.items():
        for tree_name, tree in trees:
            figures = [sh_cost_pct(shell, ms, seconds, tree) for ms in PERIODS_MS]
            print(f"  {'sh loop, ' + name:22s} {tree_name:13s} " + "   ".join(f"{f:5.2f}%" for f in figures),
                  flush=True)  # fmt: skip
    runs = {
        "native": lambda: median_step_ms(steps, binary),
        "sh loop": lambda: median_step_ms(steps, None),
        "without": lambda: median_step_ms(steps, None, sample=False),
    }
    figures = interleave(rounds, runs)
    for name in ("native", "sh loop"):
        print(ratio_line(f"step time with / without the {name} sampler (mksh, 10 ms)", figures[name],
                         figures["without"], "1.00 +/- 0.02"))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
