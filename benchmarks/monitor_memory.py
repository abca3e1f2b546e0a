"""Does ``edgebench monitor`` keep its memory flat?  An hour at 10 ms (360 000 samples) simulated by count.

Drives the monitor's own sink (decode, ``samples.csv``, ``freq_temperature.csv``, throttling tracker, energy totals)
with back-to-back polls of a fixture tree, so an hour of samples takes about a minute, and prints the resident
memory (VmRSS) at checkpoints and its growth from the first checkpoint to the last.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from edgebench.host.cpu import policy_limits
from edgebench.host.sysfs import SysFS
from edgebench.measure.throttling import ThrottleTracker
from edgebench.monitor.session import MonitorSink
from edgebench.sensors.sampler import Sampler, SamplerConfig
from edgebench.sensors.thermal_trips import default_hot_c

TREES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sysfs"


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=360_000, help="360000 = 1 h at 10 ms")
    parser.add_argument("--tree", default="jetson_tx2")
    parser.add_argument("--checkpoints", type=int, default=10)
    args = parser.parse_args()
    root = str(TREES / args.tree)
    with tempfile.TemporaryDirectory(prefix="edgebench-monitor-") as tmp:
        out = Path(tmp)
        sampler = Sampler(SamplerConfig(out_csv=str(out / "samples.csv"), sysfs_root=root))
        sysfs = SysFS(root)
        sink = MonitorSink(sampler, out, ThrottleTracker(policy_limits(sysfs), default_hot_c(sysfs)), 1.0)
        every = args.samples // args.checkpoints
        marks: list[tuple[int, int]] = []
        start = time.perf_counter()
        for i in range(1, args.samples + 1):
            sink.write(sampler.poll())
            if i % 100 == 0:
                sink.flush()  # the monitor flushes every second: every 100 samples at 10 ms
            if i % every == 0:
                marks.append((i, rss_kib()))
                print(f"  {i:>7} samples: RSS {marks[-1][1] / 1024:.1f} MiB", flush=True)
        sink.close()
        elapsed = time.perf_counter() - start
        size_mib = (out / "samples.csv").stat().st_size / 2**20
    growth = marks[-1][1] - marks[0][1]
    print(f"{args.tree}: {args.samples} samples ({args.samples / 360_000:.2f} h at 10 ms) in {elapsed:.0f} s, "
          f"{len(sampler.meta.columns)} columns, samples.csv {size_mib:.0f} MiB")  # fmt: skip
    per_hour_mib = growth / 1024 / (marks[-1][0] - marks[0][0]) * 360_000
    print(f"RSS growth from {marks[0][0]} to {marks[-1][0]} samples: {growth} KiB "
          f"({per_hour_mib:.2f} MiB per hour of samples; target: flat)")  # fmt: skip


if __name__ == "__main__":
    main()
