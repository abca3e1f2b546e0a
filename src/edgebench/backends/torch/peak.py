"""The device's measured ceilings: dense fp32 GEMM throughput and memory copy bandwidth, for one placement.

Per-layer achieved GFLOP/s means little without the ceiling it is measured against, and a datasheet peak
(cores x clock x SIMD width) is rarely reached by a real library on a real board.  So the ceiling is measured the
way the layers run: ``torch.mm`` on square fp32 matrices (best of several sizes and repeats) and
``Tensor.copy_`` of a buffer larger than the caches (read + write counted), on the same cores and thread count
as the trial.  Both are best-of figures: what this device can do, not what it usually does.

It runs in a fresh process pinned like a worker (``python -m edgebench.backends.torch.peak CORES THREADS``), once per
device key (host, CPU model, cores, threads, torch version), and the store keeps the answer.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

from edgebench.host.cpuset import format_cpu_list, parse_cpu_list

GEMM_SIZES = (256, 512, 1024, 2048)
COPY_BYTES = 64 * 2**20
_BUDGET_PER_SIZE_S = 0.4


@dataclass(frozen=True)
class DevicePeak:
    key: str
    hostname: str
    cpu_model: str | None
    cores: str
    threads: int
    torch: str
    gemm_gflops: float
    gemm_size: int
    copy_gbps: float
    copy_bytes: int
    measured_at: str
    #: How long the benchmark's threads waited for a CPU, in percent of the time they were runnable (the
    #: scheduler's counters over the measurement): other load on its cores takes the ceiling down with it.
    run_queue_wait_pct: float | None = None
    #: Why the figure is not this device's ceiling (``device busy: ...``), None where it was measured quiet; a
    #: busy figure is stored flagged and measured again the next time it is asked for.
    busy: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def ridge_flop_per_byte(self) -> float:
        """Arithmetic intensity where the roofline turns from memory- to compute-bound."""
        return self.gemm_gflops / self.copy_gbps


def device_key(hostname: str, cpu_model: str | None, cores: str, threads: int, torch_version: str) -> str:
    return f"{hostname}|{cpu_model or '?'}|cpu {cores}|{threads} threads|torch {torch_version}"


def best_gemm_gflops(sizes: tuple[int, ...] = GEMM_SIZES) -> tuple[float, int]:
    """Best fp32 ``torch.mm`` GFLOP/s over ``sizes`` (2n^3 FLOPs per product) and the size that reached it."""
    import torch

    best, best_n = 0.0, sizes[0]
    for n in sizes:
        a, b = torch.randn(n, n), torch.randn(n, n)
        torch.mm(a, b)  # first call: allocation, library warm-up
        spent, tries = 0.0, 0
        while spent < _BUDGET_PER_SIZE_S or tries < 2:
            t0 = time.perf_counter_ns()
            torch.mm(a, b)
            dt = (time.perf_counter_ns() - t0) / 1e9
            spent, tries = spent + dt, tries + 1
            rate = 2 * n**3 / dt / 1e9
            if rate > best:
                best, best_n = rate, n
    return best, best_n


def best_copy_gbps(nbytes: int = COPY_BYTES, repeats: int = 8) -> float:
    """Best ``Tensor.copy_`` bandwidth in GB/s (10^9 bytes), counting the read and the write."""
    import torch

    src = torch.ones(nbytes // 4)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        dst.copy_(src)
        dt = (time.perf_counter_ns() - t0) / 1e9
        best = max(best, 2 * nbytes / dt / 1e9)
    return best


def measure_here(cores: tuple[int, ...], threads: int, cpu_model: str | None) -> DevicePeak:
    """Pin this process, set the threads, and measure (in-process: run it in a fresh one, see :func:`measure`)."""
    from edgebench.host.sysfs import SysFS
    from edgebench.measure.hygiene import BUSY_WAIT_PCT, own_wait_pct
    from edgebench.sensors.sched import growth, read_threads

    os.sched_setaffinity(0, cores)
    import torch

    torch.set_num_threads(threads)
    proc = SysFS("/")
    before = read_threads(proc)
    gemm, size = best_gemm_gflops()
    copy = best_copy_gbps()
    waited = growth(before, read_threads(proc))
    wait_pct = busy = None
    if waited is not None and waited.on_cpu_ns + waited.run_queue_wait_ns > 0:
        wait_pct = 100.0 * waited.run_queue_wait_ns / (waited.on_cpu_ns + waited.run_queue_wait_ns)
        if wait_pct > own_wait_pct(threads, cores) + BUSY_WAIT_PCT:
            busy = f"device busy: its threads waited for a CPU {wait_pct:.0f}% of the time they were runnable"
    cpu_list = format_cpu_list(cores)
    return DevicePeak(
        key=device_key(socket.gethostname(), cpu_model, cpu_list, threads, torch.__version__),
        hostname=socket.gethostname(),
        cpu_model=cpu_model,
        cores=cpu_list,
        threads=threads,
        torch=torch.__version__,
        gemm_gflops=gemm,
        gemm_size=size,
        copy_gbps=copy,
        copy_bytes=COPY_BYTES,
        measured_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        run_queue_wait_pct=wait_pct,
        busy=busy,
    )


def best_of(stored: dict[str, Any], fresh: dict[str, Any]) -> dict[str, Any]:
    """Two measurements of one placement as one figure: each ceiling the higher of the two (a ceiling is a best-of:
    other load only ever takes it down), flagged busy only while the latest is (a quiet one settles it)."""
    out = dict(fresh)
    for ceiling, size in (("gemm_gflops", "gemm_size"), ("copy_gbps", "copy_bytes")):
        if stored.get(ceiling, 0.0) > fresh[ceiling]:
            out[ceiling], out[size] = stored[ceiling], stored[size]
    return out


def measure(cores: tuple[int, ...], threads: int, timeout_s: float = 300.0) -> DevicePeak:
    """Run the micro-benchmarks in a fresh process pinned to ``cores`` with ``threads`` intra-op threads."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    proc = subprocess.run(
        [sys.executable, "-m", "edgebench.backends.torch.peak", format_cpu_list(cores), str(threads)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout_s,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        detail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise RuntimeError(f"peak micro-benchmark failed: {detail}")
    return DevicePeak(**json.loads(lines[-1]))


def main(argv: list[str] | None = None) -> int:
    from edgebench.host.cpu import cpu_model
    from edgebench.host.lifetime import die_with_parent
    from edgebench.host.sysfs import SysFS

    die_with_parent()
    cores_text, threads_text = argv or sys.argv[1:]
    peak = measure_here(parse_cpu_list(cores_text), int(threads_text), cpu_model(SysFS("/")))
    print(json.dumps(peak.to_dict()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
