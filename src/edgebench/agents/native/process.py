"""The native sampler as the Python agent's sampler process (``--sampler native`` on edgebench's own workloads).

:class:`NativeSamplerProcess` has :class:`~edgebench.sensors.sampler.SamplerProcess`'s interface: started once the
worker is ready, stopped with SIGTERM after it, the samples CSV and the run's :class:`SamplerMeta` as the Python
sampler gives them.  The binary runs with ``--raw``: its records are the Python sampler's raw format, stamped on
CLOCK_MONOTONIC (the clock of the worker's events), so the same :class:`Sampler` plan decodes them; its CPU comes
from ``wait4(2)``, to the microsecond.  NVML is a library, not a file: a native trial has no GPU power column.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

from edgebench.agents.native.build import MACHINE_ABIS, TARGETS, NotBuilt, this_machine
from edgebench.records.sampling import SamplerMeta
from edgebench.sensors.sampler import Sampler, SamplerConfig, SamplerProcess

#: Sensors the native sampler cannot read, and why.
UNREADABLE = {"nvml": "NVML is a C library, not a file the native sampler reads"}


class NativeSamplerProcess:
    """Launcher side of the native sampler: start, wait for its first record, stop and decode (see module doc)."""

    def __init__(self, config: SamplerConfig, binary: Path, why: str) -> None:
        names = tuple(n for n in config.sensors if n not in UNREADABLE)
        self.config = config
        self.plan = Sampler(SamplerConfig(**{**asdict(config), "sensors": names}), open_files=False)
        self.plan.meta.unavailable.update({n: r for n, r in UNREADABLE.items() if n in config.sensors})
        self.plan.meta.kind, self.plan.meta.why = "native", why
        self.binary = binary
        self.raw = Path(config.out_csv).with_suffix(".raw")
        #: Its own working folder: a native sampler whose parent died removes its working folder.
        self.folder = Path(config.out_csv).parent / "native-sampler"
        self._proc: subprocess.Popen[bytes] | None = None
        self._started_ns = 0

    def start(self, timeout_s: float = 30.0) -> NativeSamplerProcess:
        self.folder.mkdir(exist_ok=True)
        root = "" if self.config.sysfs_root.rstrip("/") == "" else self.config.sysfs_root.rstrip("/")
        sources = [f"{s.path}:{s.max_bytes}:{every}" for s, (_, _, every) in zip(self.plan.sources, self.plan._files,
                                                                                  strict=True)]  # fmt: skip
        args = [str(self.binary), "--raw", "monotonic", f"{self.config.interval_ms:g}", root, str(os.getpid()),
                *sources]  # fmt: skip
        with open(self.raw, "wb") as out:
            self._proc = subprocess.Popen(args, cwd=self.folder, stdout=out, stderr=subprocess.PIPE)
        self._started_ns = time.perf_counter_ns()
        deadline = time.monotonic() + timeout_s
        while self.raw.stat().st_size == 0:  # its first record is on disk: the samples cover what follows
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                err = self._proc.stderr.read().decode(errors="replace").strip() if self._proc.stderr else ""
                raise RuntimeError(f"the native sampler failed to start: {err or 'no record within the timeout'}")
            time.sleep(0.005)
        return self

    def stop(self, timeout_s: float = 10.0) -> SamplerMeta:
        """SIGTERM (its last record reads every source), its CPU from ``wait4``, the records decoded to the CSV."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while (done := os.wait4(self._proc.pid, os.WNOHANG))[0] == 0:
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"the native sampler did not stop within {timeout_s:g} s")
            time.sleep(0.005)
        wall_s = (time.perf_counter_ns() - self._started_ns) / 1e9
        _, status, usage = done
        self._proc.returncode = os.waitstatus_to_exitcode(status)
        meta = SamplerMeta(**asdict(self.plan.meta))
        meta.loop_cpu_s, meta.loop_wall_s = usage.ru_utime + usage.ru_stime, wall_s
        meta.samples, meta.late_samples = self._decode()
        return meta

    def _decode(self) -> tuple[int, int]:
        """Write the CSV from the raw records; their count, and how many came over 1.5 periods after the last (the
        sampler overran a period and realigned, as the Python sampler counts a late sample)."""
        rows = late = 0
        last: int | None = None
        with open(self.raw, "rb") as raw, open(self.config.out_csv, "w", encoding="ascii") as out:
            out.write(",".join(["t_ns", *self.plan.meta.columns]) + "\n")
            for t_ns, values in self.plan.rows(raw):
                out.write(",".join([str(t_ns), *("" if v is None else str(v) for v in values)]) + "\n")
                late += last is not None and t_ns - last > 1.5 * self.plan.interval_ns
                last, rows = t_ns, rows + 1
        return rows, late

    def kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


def sampler_process(config: SamplerConfig, setting: str) -> SamplerProcess | NativeSamplerProcess:
    """The sampler process a trial's ``sampler`` setting asks for: the native one where ``native`` is asked and it
    builds here, else the Python one (why the native one is missing then rides in the meta's ``why``)."""
    if setting != "native":
        return SamplerProcess(config)
    try:
        binary = this_machine()
    except NotBuilt as exc:
        return _WithReason(config, f"--sampler native, but no native sampler here: {exc}")
    machine = os.uname().machine
    return NativeSamplerProcess(config, binary, f"{TARGETS[MACHINE_ABIS[machine]]} build for this machine's {machine}")


class _WithReason(SamplerProcess):
    """The Python sampler, its meta saying why the native one asked for did not run."""

    def __init__(self, config: SamplerConfig, why: str) -> None:
        super().__init__(config)
        self.why = why

    def stop(self, timeout_s: float = 10.0) -> SamplerMeta:
        meta = super().stop(timeout_s)
        meta.why = self.why
        return meta
