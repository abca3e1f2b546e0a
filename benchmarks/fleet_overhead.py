"""What does a fleet cost per trial, and does a sweep's wall time fall with the number of devices?

Starts a real Ray cluster on this machine (``tests/ray_cluster.py``: a head joined with ``edgebench fleet join``)
whose one host advertises 15 simulated devices, all opening this machine's CPU: 1 of class ``k1``, 2 of ``k2``, 4 of
``k4`` and 8 of ``k8``.  Trials are command workloads that sleep (``sleep S`` per step), so the wall time is the
devices' and not the 2 cores' -- except the agent, sampler and shell each trial starts, which do use the cores.

Prints:
* scheduling overhead per trial: the wall time per trial of a sweep on the local executor and on Ray with one
  device (same trials, configurations interleaved), and their difference;
* the wall time of a sweep of 32 trials (``--quick``: 8) on 1, 2, 4 and 8 devices, and the speed-up over 1 device.
Run from the repository root with ``PYTHONPATH=$PWD/src:$PWD``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.ray_cluster import LocalCluster

from _common import interleave
from edgebench.config.sweep_file import load_config
from edgebench.host.sysfs import SysFS
from edgebench.store import Store
from edgebench.sweep.execute import SilentReporter
from edgebench.sweep.job import SweepJob, open_executor
from edgebench.sweep.plan import plan

COUNTS = (1, 2, 4, 8)


def sweep_s(executor: object, root: Path, trials: int, step_s: float, target: str) -> float:
    """Wall time of one sweep of ``trials`` sleeping command trials (a fresh store and sweep name each time)."""
    name = f"b{time.monotonic_ns()}"
    overrides = ["models=[lenet]", "backend=command", f"command=sleep {step_s}; echo step; sleep {step_s}; echo step",
                 "step_pattern=^step$", "steps=2", "warmup=0", "infer_steps=0", "idle=0", f"name={name}",
                 f"batch_sizes={list(range(1, trials + 1))}"]  # fmt: skip
    config = load_config(None, overrides).config
    planned = plan(config, source=None, sysfs=SysFS("/"), allowed=(0, 1))
    with Store(root / f"{name}.sqlite") as store:
        job = SweepJob(plan=planned, store=store, config_json="{}", cooldown=config.cooldown,
                       reporter=SilentReporter(), target=target)  # fmt: skip
        start = time.perf_counter()
        outcome = executor.run(job)  # type: ignore[attr-defined]
        wall = time.perf_counter() - start
    bad = [r.reason for r in outcome.results if not r.ok]
    if bad or len(outcome.results) != trials:
        raise SystemExit(f"the benchmark's sweep failed: {len(outcome.results)} results, {bad[:3]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="8 trials, 1 round: checks that it runs")
    args = parser.parse_args()
    trials, rounds, step_s = (8, 1, 0.25) if args.quick else (32, 3, 0.5)
    root = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
    cluster = LocalCluster(root)
    targets = {f"sim{k}-{i}": "local" for k in COUNTS for i in range(k)}
    try:
        start = time.perf_counter()
        cluster.join("bench", targets=targets, classes={n: n.split("-")[0].replace("sim", "k") for n in targets},
                     num_cpus=2)  # fmt: skip
        print(f"cluster up in {time.perf_counter() - start:.1f} s ({len(targets)} simulated devices)", flush=True)
        local = open_executor("local")
        ray_executor = open_executor("ray", address=cluster.address)
        per = max(2, trials // 4)
        print(f"overhead: {per} trials per sweep, {rounds} interleaved rounds", flush=True)
        figures = interleave(rounds, {
            "local": lambda: sweep_s(local, root, per, step_s, "local") / per,
            "ray-1": lambda: sweep_s(ray_executor, root, per, step_s, "class:k1") / per,
        })  # fmt: skip
        loc, ray1 = statistics.median(figures["local"]), statistics.median(figures["ray-1"])
        print(f"wall per trial: local {loc:.3f} s, Ray on one device {ray1:.3f} s; Ray's scheduling overhead "
              f"{ray1 - loc:+.3f} s per trial ({ray1 / loc:.3f}x)")  # fmt: skip
        print(f"scaling: {trials} trials of {2 * step_s:g} s sleep each, {rounds} interleaved rounds", flush=True)
        walls = interleave(rounds, {
            f"{k} devices": (lambda k=k: sweep_s(ray_executor, root, trials, step_s, f"class:k{k}")) for k in COUNTS
        })  # fmt: skip
        one = statistics.median(walls["1 devices"])
        for k in COUNTS:
            wall = statistics.median(walls[f"{k} devices"])
            print(f"{k} devices: {wall:7.2f} s  speed-up {one / wall:5.2f}x (ideal {k}x)")
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()
        cluster.stop()


if __name__ == "__main__":
    main()
