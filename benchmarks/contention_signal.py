"""Does a short trial see a busy device?  The worker's run-queue wait with nothing else started and beside busy loops.

Issue 37: a 10-step LeNet trial beside a busy loop on every core (a 0.28 s window, too short for /proc/stat's
10 ms ticks) said only `unstable steps`, never `device busy`.  The worker now reads its threads' scheduler counters
(``/proc/self/task/*/schedstat``) at its window's edges; ``hygiene.run_queue_wait_pct`` is the share of their
runnable time they waited for a CPU, and over ``hygiene.BUSY_WAIT_PCT`` the trial says `device busy`.

Rounds interleave a quiet trial (nothing started by this script) and a busy one (one busy loop per core, each in a
session of its own, as another user's process is), and print, per configuration, the wait share of each side, how
many trials each side flagged, and the threshold.  The quiet side's figures are this machine's floor: take the final
ones on a quiet machine (here the machine is shared, and its other users' load shows on the quiet side too).

``--study``: then `study tx2 --quick --backend fake` beside two busy loops, with each trial's reasons
(``measure.trust.disturbances``) and each verdict: issue 37's "Done when" asks every decision it would have made to
be "inconclusive" with the reason (the decision half is the conclusions-repeats branch's).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from edgebench.measure.hygiene import BUSY_WAIT_PCT

CONFIGS = {
    "lenet b8, 10 steps, 1 thread": ["-m", "lenet", "-b", "8", "--steps", "10", "--threads", "1"],
    "lenet b8, 10 steps, 2 threads": ["-m", "lenet", "-b", "8", "--steps", "10", "--threads", "2"],
    "fake 5 ms steps, 10 steps": ["--backend", "fake", "-m", "lenet", "--steps", "10", "--threads", "1"],
}


@contextmanager
def busy_loops(cores: list[int]) -> Iterator[None]:
    code = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", code, str(c)], start_new_session=True) for c in cores]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def trial(args: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "edgebench", "run", *args, "--warmup", "2", "--infer-steps", "0", "--no-store",
         "--json"],
        capture_output=True, text=True, check=True, env=dict(os.environ, EDGEBENCH_FAKE_STEP_MS="5"),
    )  # fmt: skip
    return json.loads(done.stdout)["hygiene"]


def rounds(n: int, cores: list[int]) -> None:
    for name, args in CONFIGS.items():
        sides: dict[str, list[dict]] = {"quiet": [], "busy": []}
        for r in range(n):
            for side in ("quiet", "busy") if r % 2 == 0 else ("busy", "quiet"):
                if side == "busy":
                    with busy_loops(cores):
                        sides[side].append(trial(args))
                else:
                    sides[side].append(trial(args))
        print(name)
        for side, found in sides.items():
            waits = [h["run_queue_wait_pct"] for h in found if h["run_queue_wait_pct"] is not None]
            flagged = sum("device busy" in (h["warning"] or "") for h in found)
            ticks = sum(h["other_cpu_pct"] is not None for h in found)
            spread = f"median {statistics.median(waits):.1f}% (range {min(waits):.1f}-{max(waits):.1f})"
            print(f"  {side}: run-queue wait {spread}; flagged busy {flagged}/{len(found)}; the ticks resolved "
                  f"{ticks}/{len(found)}")  # fmt: skip
    print(f"threshold: BUSY_WAIT_PCT = {BUSY_WAIT_PCT:g}% (target: every busy trial flagged, no quiet one on a quiet "
          "machine)")  # fmt: skip


def busy_study(cores: list[int]) -> int:
    """study tx2 --quick on the fake backend beside two busy loops: each trial's reasons, each verdict."""
    from edgebench.measure.trust import disturbances
    from edgebench.store import Store

    with tempfile.TemporaryDirectory() as tmp, busy_loops((cores * 2)[:2]):  # two busy loops, on two cores if any
        store = Path(tmp) / "s.sqlite"
        done = subprocess.run(
            [sys.executable, "-m", "edgebench", "study", "tx2", "--quick", "--json", "--backend", "fake", "--store",
             str(store)],
            capture_output=True, text=True, env=dict(os.environ, EDGEBENCH_FAKE_STEP_MS="20"),
        )  # fmt: skip
        report = json.loads(done.stdout)
        with Store(store, read_only=True) as db:
            for r in db.trials():
                print(f"  trial {r.trial_id} {r.trial.model} b{r.trial.batch_size}: {disturbances(r) or 'not flagged'}")
    decided = 0
    for v in report["verdicts"]:
        print(f"  {v['observation']['id']}: {v['outcome']}: {v['reason'][:150]}")
        decided += v["outcome"] in ("holds", "does not hold")
    print(f"decisions made from trials beside two busy loops: {decided} (target 0: each 'inconclusive', with why)")
    return 0 if decided == 0 else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--study", action="store_true", help="also run the quick TX2 study beside two busy loops")
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    rounds(args.rounds, cores)
    if args.study:
        raise SystemExit(busy_study(cores))


if __name__ == "__main__":
    main()
