"""What one sampler tick costs with every sensor a device has: each fixture tree (and this machine's live /proc).

Prints, per tree, the sources it reads, the median time of one poll (the whole cost paid during a trial), the
share of one core that is at a 10 ms period, and the time to decode one record afterwards (paid inside the monitor's
loop, and after the trial by ``edgebench run``).  Trees are measured in interleaved rounds.

Fixture files are regular files: on a real board a sysfs read goes through the driver (an INA3221 read is an I2C
transfer), so these figures are the sampler's own cost, a lower bound of a board's.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import time
from pathlib import Path

from edgebench.sensors.sampler import Sampler, SamplerConfig

TREES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sysfs"


def poll_and_decode_us(sampler: Sampler, n: int) -> tuple[float, float]:
    clock = time.perf_counter_ns
    start = clock()
    records = [sampler.poll() for _ in range(n)]
    poll_us = (clock() - start) / n / 1e3
    raw = io.BytesIO(b"".join(records))
    start = clock()
    rows = sum(1 for _ in sampler.rows(raw))
    return poll_us, (clock() - start) / rows / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--polls", type=int, default=2000)
    args = parser.parse_args()
    roots = {p.name: str(p) for p in sorted(TREES.iterdir()) if p.is_dir()}
    roots["live /"] = "/"
    samplers = {}
    for name, root in roots.items():
        pid = 4242 if name == "rpi4" else os.getpid() if root == "/" else None
        samplers[name] = Sampler(SamplerConfig(out_csv="/dev/null", sysfs_root=root, pid=pid))
    polls: dict[str, list[float]] = {n: [] for n in samplers}
    decodes: dict[str, list[float]] = {n: [] for n in samplers}
    for r in range(args.rounds):
        for name in samplers if r % 2 == 0 else reversed(list(samplers)):
            p, d = poll_and_decode_us(samplers[name], args.polls)
            polls[name].append(p)
            decodes[name].append(d)
    print(f"{'tree':<14} {'sensors':<62} {'files':>5} {'poll us':>8} {'% core @10ms':>13} {'decode us':>10}")
    for name, sampler in samplers.items():
        poll = statistics.median(polls[name])
        files = len(sampler._files)
        print(f"{name:<14} {','.join(sampler.meta.sensors):<62} {files:>5} {poll:>8.1f} {poll / 100:>12.2f}% "
              f"{statistics.median(decodes[name]):>10.1f}")  # fmt: skip
    print(f"(median of {args.rounds} interleaved rounds of {args.polls} polls at a 10 ms period's schedule: slow "
          "sensors every 10th poll; % core counts the reads only, not the loop's sleep and wake-up)")  # fmt: skip


if __name__ == "__main__":
    main()
