"""``monitor`` with the native sampler: on a device (``--target``; no Python needed there) or here (``--sampler
native``), each record decoded and written as it arrives.

The binary (:mod:`edgebench.agents.native`, placed on the device by :mod:`edgebench.agents.sh.native`) runs through
the device's shell with its records on that shell's stdout, so the workstation decodes each with the local sensors'
parsers, writes its rows and reports throttling while it happens, in constant memory on both sides; nothing
accumulates on the device.  Its stamps are the device's monotonic clock (``/proc/uptime``'s, CLOCK_BOOTTIME),
here CLOCK_MONOTONIC as the Python monitor's.  The end of ``--duration``, Ctrl-C or SIGTERM sends it SIGTERM
through a second shell command: one last record of every source, then its own CPU.  A dropped connection hangs it
up (adbd and sshd signal the session), and one that outlives its shell sees its parent gone and stops.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import threading
import time
from dataclasses import asdict
from typing import IO

from edgebench.agents.sh.native import SamplerChoice
from edgebench.agents.sh.run import CLK_TCK, RECOVER_S, SH_UNREADABLE, AgentShell, parse_device_output, record_blobs
from edgebench.host.sysfs import SysFS
from edgebench.monitor.session import MonitorConfig, MonitorSink
from edgebench.records.sampling import SamplerMeta
from edgebench.sensors.sampler import Sampler, SamplerConfig

#: The first line the device prints: the sampler's pid, for the SIGTERM that stops it.
_PID_LINE = "edgebench-monitor"
#: The last line of the run folder's removal: without it the removal did not reach the device.
_REMOVED = "edgebench-removed"
#: How often the records written so far are flushed to disk, as the Python monitor does.
_FLUSH_EVERY_NS = 1_000_000_000


class NativeLoop:
    """The native sampler's loop on the device behind ``shell``, as :func:`~edgebench.monitor.session.run_monitor`
    drives it (a :class:`~edgebench.monitor.session.SamplingLoop`)."""

    def __init__(
        self, config: MonitorConfig, shell: AgentShell, choice: SamplerChoice, sysfs: SysFS, *, root: str = "",
        clock: str = "uptime",
    ) -> None:  # fmt: skip
        """``sysfs``: the device's files as this process reads them (to plan the sensors); ``root``: the prefix of
        every path on the device (a fixture tree); ``clock``: ``uptime`` on a device, ``monotonic`` here."""
        assert choice.path is not None
        self.shell, self.path, self.root, self.clock = shell, choice.path, root, clock
        self.sysfs = sysfs
        names = tuple(n for n in config.sensors if n not in SH_UNREADABLE)
        self.sampler = Sampler(
            SamplerConfig(out_csv="", interval_ms=config.interval_ms, sensors=names, pid=config.pid),
            sysfs=sysfs, open_files=False,
        )  # fmt: skip
        self.sampler.meta.unavailable.update({n: r for n, r in SH_UNREADABLE.items() if n in config.sensors})
        self.sampler.meta.kind, self.sampler.meta.why = "native", choice.why
        self.sampler.meta.clk_tck = CLK_TCK
        self._stop = threading.Event()
        #: Why the records ended other than by a stop (the connection dropped, the sampler died); None after a stop.
        self.ended_by: str | None = None

    def stop(self) -> None:
        """Ask the device's sampler for its last record (safe from a signal handler: the loop sends the signal)."""
        self._stop.set()

    def run(self, sink: MonitorSink) -> SamplerMeta:
        run_dir = f"{self.shell.workdir().rstrip('/')}/monitor-{os.urandom(6).hex()}"
        sources = " ".join(
            shlex.quote(f"{s.path}:{s.max_bytes}:{every}")
            for s, (_, _, every) in zip(self.sampler.sources, self.sampler._files, strict=True)
        )
        q = shlex.quote(run_dir)
        # exec: the sampler is the shell the client started, so a hang-up on a drop reaches it; its parent is the
        # shell's (adbd's or sshd's session), whose end it also watches
        script = (
            f"mkdir -p {q} && cd {q} && echo {_PID_LINE} $$ && exec {shlex.quote(self.path)} {self.clock} "
            f"{self.sampler.config.interval_ms:g} {shlex.quote(self.root)} $PPID {sources}"
        )
        proc = self.shell.start(script)
        assert proc.stdout is not None
        reader = _Records(proc.stdout, sink, len(self.sampler.sources), self.clock)
        thread = threading.Thread(target=reader.pump, daemon=True)
        thread.start()
        try:
            signalled = False
            while thread.is_alive():
                thread.join(0.1)
                if self._stop.is_set() and not signalled and reader.pid is not None:
                    self.shell.run(f"kill -TERM {reader.pid}", timeout_s=60)
                    signalled = True
            thread.join()
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if reader.cost is None:  # no last record and cost line: it did not stop on its own word
            err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
            said = err.splitlines()[-1] if err else f"the client exited with status {proc.returncode}"
            self.ended_by = f"the device's sampler ended before it was stopped ({said})"
        _remove(self.shell, run_dir, RECOVER_S if self.ended_by else 0.0)
        if reader.error is not None:
            raise reader.error
        return reader.meta(self.sampler.meta)


def _remove(shell: AgentShell, run_dir: str, wait_s: float) -> bool:
    """Remove the run folder on the device, waiting up to ``wait_s`` for a device that dropped to come back (an adb
    server reconnects a TCP device 5-11 s after a drop); False where it did not answer."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            done = shell.run(f"rm -rf {shlex.quote(run_dir)} && echo {_REMOVED}", timeout_s=30)
            if done.stdout.strip().endswith(_REMOVED.encode()):
                return True
        except subprocess.SubprocessError:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(1.0)


class _Records:
    """The device's output, record by record, into the sink (on a thread of its own, so that the loop can send the
    stop while this waits for the next record)."""

    def __init__(self, stdout: IO[bytes], sink: MonitorSink, n_sources: int, clock: str) -> None:
        self.stdout, self.sink, self.n_sources, self.clock = stdout, sink, n_sources, clock
        self.pid: int | None = None
        self.records = 0
        self.late = 0
        self.cost: str | None = None
        self.anchor: tuple[int, int] | None = None
        self.error: BaseException | None = None
        self._last_t: int | None = None
        self._flushed_ns = time.monotonic_ns()

    def pump(self) -> None:
        record: list[str] = []
        try:
            for raw in iter(self.stdout.readline, b""):
                line = raw.decode(errors="replace").rstrip("\r\n")  # CR LF: an old phone's pty
                if line.startswith(f"{_PID_LINE} "):
                    self.pid = int(line.split()[1])
                elif line.startswith("T "):
                    self._feed(record)
                    record = [line]
                elif line.startswith("L "):
                    self.cost = line
                elif record:
                    record.append(line)
            self._feed(record)
        except BaseException as exc:
            self.error = exc

    def _feed(self, record: list[str]) -> None:
        if not record:
            return
        ((t_ns, sources),) = parse_device_output("@samples\n" + "\n".join(record)).records
        if self.anchor is None:  # the wall clock beside the device's: exact here, within the link's delay there
            wall = time.time_ns()
            self.anchor = (wall, time.monotonic_ns() if self.clock == "monotonic" else t_ns)
        period_ns = self.sink.sampler.interval_ns
        if self._last_t is not None and t_ns - self._last_t > 1.5 * period_ns:
            self.late += 1  # the sampler overran a period and realigned: a tick was skipped
        self._last_t = t_ns
        self.sink.feed(t_ns, record_blobs(self.n_sources, sources))
        self.records += 1
        if time.monotonic_ns() - self._flushed_ns > _FLUSH_EVERY_NS:
            self.sink.flush()
            self._flushed_ns = time.monotonic_ns()

    def meta(self, planned: SamplerMeta) -> SamplerMeta:
        meta = SamplerMeta(**asdict(planned))
        meta.samples, meta.late_samples = self.records, self.late
        if self.anchor is not None:
            meta.anchor_wall_ns, meta.anchor_mono_ns = self.anchor
        if self.cost is not None:
            run = parse_device_output("@samples\n" + self.cost)
            if run.loop_cpu_ticks is not None and run.loop_start_ns is not None and run.loop_end_ns is not None:
                meta.loop_cpu_s = run.loop_cpu_ticks / CLK_TCK
                meta.loop_wall_s = (run.loop_end_ns - run.loop_start_ns) / 1e9
        return meta
