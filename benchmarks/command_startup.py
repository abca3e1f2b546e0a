"""What a command costs before it does anything, and what the layer-graph cache saves ``partition``.

Four commands, each a fresh process, interleaved over the rounds: the interpreter alone (``python -c pass``, the
floor), ``edgebench trials`` listing a one-trial store (importing the command: every subcommand module and the records),
and ``edgebench partition`` of one stored layer-traced LeNet trial with an empty graph cache (it records the graph:
torch, the model, its optimizer, a step under hooks) and with the graph cached.  Prints the medians, the command's
import over the floor, and partition's cached / uncached ratio.  Wall times: run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import interleave, ratio_line


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="edgebench-startup-") as tmp:
        folder = Path(tmp)
        env = dict(os.environ, EDGEBENCH_STORE=str(folder / "store.sqlite"), EDGEBENCH_CACHE_DIR=str(folder / "warm"))
        edgebench = [sys.executable, "-m", "edgebench"]
        trial = [*edgebench, "run", "-m", "lenet", "-b", "1", "--mode", "infer", "--trace", "layers", "--steps", "5",
                 "--warmup", "1", "--idle", "0", "--json"]  # fmt: skip
        trial_id = json.loads(subprocess.run(trial, env=env, check=True, capture_output=True, text=True).stdout)[
            "trial_id"
        ]
        partition = [*edgebench, "partition", "-m", "lenet", "--trial", trial_id, "--json"]
        timed(partition, env)  # fills the warm cache
        rounds = iter(range(10**6))

        def uncached() -> float:
            return timed(partition, dict(env, EDGEBENCH_CACHE_DIR=str(folder / f"cold-{next(rounds)}")))

        figures = interleave(
            args.rounds,
            {
                "python -c pass": lambda: timed([sys.executable, "-c", "pass"], env),
                "edgebench trials": lambda: timed([*edgebench, "trials"], env),
                "partition, graph recorded": uncached,
                "partition, graph cached": lambda: timed(partition, env),
            },
        )
    medians = {name: statistics.median(values) for name, values in figures.items()}
    for name, value in medians.items():
        print(f"{name}: median {value:.3f} s")
    floor = medians["python -c pass"]
    print(f"the command's own start (edgebench trials - python -c pass): {medians['edgebench trials'] - floor:.3f} s")
    print(ratio_line("partition cached / recorded", figures["partition, graph cached"],
                     figures["partition, graph recorded"], "< 0.3"))  # fmt: skip


if __name__ == "__main__":
    main()
