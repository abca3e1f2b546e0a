"""What the device-side sh sampler of ``--command`` trials costs: CPU per period and shell, and the step-time ratio.

1. The sampler loop's own CPU (its process with the ``sleep`` children it reaped, read from ``/proc/self/stat`` as
   it stops) in percent of one core at 10, 50 and 100 ms under ``mksh`` and ``busybox sh`` (and ``dash``), reading
   the files the local sensors read on this machine (``/``) and on the Android phone fixture tree (19 files: per-core
   clocks, thermal zones, battery).  Target: <= 1% of one core at 100 ms.
2. The median step time of a CPU-bound command workload with the sampler (10 ms) over without it, interleaved.

``--quick`` checks that it runs (short runs, two rounds); figures for the README come from a full run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from _common import interleave, ratio_line
from edgebench.agents.sh.run import run_command_trial
from edgebench.host.sysfs import SysFS
from edgebench.records.trial import Trial
from edgebench.targets.shell import LocalShell

SHELLS = {"mksh": ("mksh",), "busybox sh": ("busybox", "sh"), "dash": ("dash",)}
PHONE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sysfs" / "android_phone"
#: A CPU-bound step of about 20 ms here, printing the line that ends it.
WORKLOAD = (
    "python3 -c 'import sys\nfor i in range({n}):\n    s = sum(range(400000))\n    print(\"step\", i, flush=True)'"
)


def loop_cost_pct(shell: tuple[str, ...], interval_ms: float, seconds: float, tree: Path | None) -> float:
    trial = Trial(command=f"sleep {seconds}; echo step", step_pattern="step", model="idle", steps=1, warmup=0,
                  sample_interval_ms=interval_ms, threads=1, cores=(0,), idle_s=0)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="edgebench-bench-") as work:
        bundle = run_command_trial(trial, LocalShell(shell, workdir=work), sysfs=SysFS(tree or "/"),
                                   root=str(tree) if tree else "")  # fmt: skip
    assert bundle.sampler_meta is not None, bundle.failure
    return bundle.sampler_meta.cpu_pct_of_core


def median_step_ms(shell: tuple[str, ...], steps: int, sample: bool) -> float:
    trial = Trial(command=WORKLOAD.format(n=steps + 3), step_pattern=r"^step \d+", model="busy", steps=steps,
                  warmup=3, sample_interval_ms=10, threads=1, cores=(0,), idle_s=0)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="edgebench-bench-") as work:
        bundle = run_command_trial(trial, LocalShell(shell, workdir=work), sysfs=SysFS("/"), sample=sample)
    assert bundle.failure is None, bundle.failure
    ms = [(e.end_ns - e.start_ns) / 1e6 for e in bundle.events if e.event == "step" and e.phase == "train"]
    return statistics.median(ms)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, two rounds: check that it runs")
    args = parser.parse_args()
    seconds, rounds, steps = (1.0, 2, 10) if args.quick else (10.0, 5, 100)
    print(f"sh sampler CPU, % of one core ({seconds:g} s per figure):")
    for name, shell in SHELLS.items():
        for tree_name, tree in (("this machine", None), ("phone fixture", PHONE)):
            figures = [f"{ms:g} ms: {loop_cost_pct(shell, ms, seconds, tree):.2f}%" for ms in (10, 50, 100)]
            print(f"  {name:10s} {tree_name:13s} " + "   ".join(figures), flush=True)
    shell = SHELLS["mksh"]
    runs = {
        "with": lambda: median_step_ms(shell, steps, True),
        "without": lambda: median_step_ms(shell, steps, False),
    }
    figures = interleave(rounds, runs)
    print(ratio_line("step time with / without the sh sampler (mksh, 10 ms)", figures["with"], figures["without"],
                     "<= 1.01"))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
