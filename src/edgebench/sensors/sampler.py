"""The sampler: polls every available sensor on a fixed period and streams rows to a CSV file.

It runs in its own process (``python -m edgebench.sensors.sampler CONFIG_JSON``) so that its work never
shares an interpreter lock with the model being measured.  Timestamps are ``time.perf_counter_ns()``, which is
``CLOCK_MONOTONIC`` on Linux and so the same clock as the worker's step events.  Deadlines are absolute
(``start + k * interval``): a late wake-up does not push every later sample back.

During the run the loop only ``pread``s each source and appends the bytes to a raw file; parsing into numbers
(:meth:`Sensor.decode`) happens after the stop.  Parsing in the loop doubled the sampler's CPU cost here
(``benchmarks/sampler_overhead.py`` measures it).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from edgebench.host.lifetime import die_with_parent
from edgebench.host.sysfs import PseudoFile, SysFS
from edgebench.records.sampling import SamplerMeta
from edgebench.registry import SENSORS
from edgebench.sensors.base import PolledSource, Sensor, Source, open_source

DEFAULT_SENSORS = ("cpu_time", "process", "memory", "cpu_freq", "thermal", "process_memory", "rapl", "jetson_power",
                   "jetson_gpu", "power_supply", "odpm", "nvml")  # fmt: skip
_FLUSH_EVERY_NS = 1_000_000_000


@dataclass(frozen=True)
class SamplerConfig:
    out_csv: str
    interval_ms: float = 10.0
    sysfs_root: str = "/"
    sensors: tuple[str, ...] = DEFAULT_SENSORS
    pid: int | None = None

    @property
    def meta_path(self) -> Path:
        return Path(self.out_csv).with_suffix(".meta.json")


def build_sensors(sysfs: SysFS, names: tuple[str, ...], pid: int | None) -> tuple[list[Sensor], dict[str, str]]:
    """Instantiate the named sensors; return the available ones and ``{name: reason}`` for the rest."""
    ready: list[Sensor] = []
    unavailable: dict[str, str] = {}
    for name in names:
        sensor: Sensor = SENSORS.load(name)(sysfs, pid=pid)
        status = sensor.available()
        if status:
            ready.append(sensor)
        else:
            unavailable[name] = status.reason
    return ready, unavailable


_TIME = struct.Struct("<q")
_LENGTH = struct.Struct("<H")
_FAILED = 0xFFFF  # length marker of a read that raised (process gone, EAGAIN from a sensor chip)
_FAILED_BYTES = _LENGTH.pack(_FAILED)
_SKIPPED = 0xFFFE  # length marker of a source not due at this tick (see Sensor.min_period_ms)
_SKIPPED_BYTES = _LENGTH.pack(_SKIPPED)
#: Stands for the bytes of a source that was not due at a tick.
SKIPPED = b"<skipped>"


class Sampler:
    """Polls sensors into a raw record stream and decodes it to CSV afterwards.

    A record is the monotonic time (int64) followed by, for each source, a uint16 length and the bytes read.
    Usable in-process (tests, ``monitor``) or as the sampler process.
    """

    def __init__(self, config: SamplerConfig, *, sysfs: SysFS | None = None, open_files: bool = True) -> None:
        """``sysfs`` discovers the sensors (default: a tree at ``config.sysfs_root``); ``open_files=False`` plans
        the records without opening anything, for a sampler that reads the files elsewhere (the device-side ``sh``
        sampler of ``--command`` trials), whose records :meth:`decode_record` then decodes with the same parsers."""
        self.config = config
        self.interval_ns = int(config.interval_ms * 1e6)
        sysfs = sysfs if sysfs is not None else SysFS(config.sysfs_root)
        #: The sources in record order, for a sampler that reads them elsewhere.
        self.sources: list[Source] = []
        self.sensors, unavailable = build_sensors(sysfs, config.sensors, config.pid)
        columns: list[str] = []
        labels: dict[str, str] = {}
        #: (open source, max bytes, poll every n-th tick), in record order
        self._files: list[tuple[PseudoFile | PolledSource | None, int, int]] = []
        self._tick = 0
        #: (sensor, its first source, one past its last source, its number of columns), in record order
        self._layout: list[tuple[Sensor, int, int, int]] = []
        for sensor in list(self.sensors):
            try:
                sensor_columns = sensor.open()
            except OSError as exc:  # listed but not readable, e.g. permissions
                unavailable[sensor.name] = f"cannot open: {exc}"
                self.sensors.remove(sensor)
                continue
            columns.extend(sensor_columns)
            labels.update(sensor.labels())
            first = len(self._files)
            self._layout.append((sensor, first, first + len(sensor.sources()), len(sensor_columns)))
            every = max(1, round(sensor.min_period_ms / config.interval_ms))
            for source in sensor.sources():
                self.sources.append(source)
                if not open_files:
                    self._files.append((None, source.max_bytes, every))
                    continue
                try:
                    self._files.append((open_source(sysfs, source), source.max_bytes, every))
                except OSError:
                    self._files.append((None, 0, every))  # decoded as a failed read every time
        self.meta = SamplerMeta(
            interval_ms=config.interval_ms,
            columns=columns,
            sensors=[s.name for s in self.sensors],
            unavailable=unavailable,
            labels=labels,
            clk_tck=os.sysconf("SC_CLK_TCK"),
            anchor_wall_ns=time.time_ns(),
            anchor_mono_ns=time.perf_counter_ns(),
            power_channels=[asdict(c) for s in self.sensors for c in s.power_channels()],
            kind="python",
        )
        self._stop = False
        self._final_record = True
        self._sleeping = False
        self._loop_thread: int | None = None

    def stop(self, *_: object, final_record: bool = True) -> None:
        """Ask the loop to end after the sample in progress (safe from a signal handler), with one more record taken
        after this call where the stop came while a record was being read (``final_record``: a run's end must be
        covered; a consumer that has all the records it wants, a monitor's sample budget, passes False).

        A loop asleep until its next sample is woken: Python resumes an interrupted ``sleep`` after the handler
        returns, so at a long period (``--interval 30s``) the last sample would come a whole period late.  Called
        from another thread, it only sets the flag: an exception raised there would end that thread, not the sleep.
        """
        self._final_record = final_record
        self._stop = True
        if self._sleeping and threading.get_ident() == self._loop_thread:
            raise _WakeUp  # in a signal handler on the loop's own thread: cut its sleep short

    def poll(self, every_source: bool = False) -> bytes:
        """One raw record: the time, then each source's bytes.  This is the whole cost paid during a trial.

        ``every_source`` reads slow sources too even when they are not due (the last record after a stop), so every
        column has a reading at the end of the run as at its start.
        """
        parts = [_TIME.pack(time.perf_counter_ns())]
        pack, tick = _LENGTH.pack, self._tick
        self._tick += 1
        for handle, size, every in self._files:
            if tick % every and not every_source:
                parts.append(_SKIPPED_BYTES)
                continue
            try:
                blob = handle.read(size)  # type: ignore[union-attr]
            except (OSError, AttributeError):
                parts.append(_FAILED_BYTES)
                continue
            parts.append(pack(len(blob)))
            parts.append(blob)
        return b"".join(parts)

    def run(self, out: IO[bytes], on_first_sample: Callable[[], None] | None = None) -> SamplerMeta:
        """Record until :meth:`stop`; every record is written before returning, the last one taken after the stop."""
        cpu0, wall0 = _cpu_s(), time.perf_counter_ns()
        deadline, last_flush = wall0, wall0
        late = samples = 0
        write, poll = out.write, self.poll
        while True:
            stopping = self._stop
            write(poll(stopping))
            samples += 1
            if samples == 1 and on_first_sample is not None:
                out.flush()
                on_first_sample()
            if self._stop:
                if not stopping and self._final_record:  # the stop came after this record's time was taken
                    write(poll(True))
                    samples += 1
                break
            deadline += self.interval_ns
            now = time.perf_counter_ns()
            if now - last_flush > _FLUSH_EVERY_NS:
                out.flush()
                last_flush = now
            if now >= deadline:  # overran a whole period: count it and realign rather than burst
                late += 1
                deadline = now
                continue
            try:
                self._loop_thread = threading.get_ident()
                self._sleeping = True
                if not self._stop:
                    time.sleep((deadline - now) / 1e9)
            except _WakeUp:
                pass
            finally:
                self._sleeping = False
        out.flush()
        self.meta.samples, self.meta.late_samples = samples, late
        self.meta.loop_cpu_s = _cpu_s() - cpu0
        self.meta.loop_wall_s = (time.perf_counter_ns() - wall0) / 1e9
        return self.meta

    def records(self, raw: IO[bytes]) -> Iterator[tuple[int, list[bytes | None]]]:
        """``(t_ns, blobs)`` for each complete record of a raw stream (a torn last record is dropped).

        A blob is ``None`` for a failed read and :data:`SKIPPED` for a source that was not due.
        """
        n = len(self._files)
        while head := raw.read(8):
            if len(head) < 8:
                return
            blobs: list[bytes | None] = []
            for _ in range(n):
                size_bytes = raw.read(2)
                if len(size_bytes) < 2:
                    return
                (size,) = _LENGTH.unpack(size_bytes)
                if size == _SKIPPED:
                    blobs.append(SKIPPED)
                    continue
                if size == _FAILED:
                    blobs.append(None)
                    continue
                blob = raw.read(size)
                if len(blob) < size:
                    return
                blobs.append(blob)
            yield _TIME.unpack(head)[0], blobs

    def decode_record(self, blobs: list[bytes | None]) -> list[int | float | None]:
        """One record's values in column order; ``None`` where a source failed or was not due."""
        values: list[int | float | None] = []
        for sensor, lo, hi, width in self._layout:
            mine = blobs[lo:hi]
            if mine and mine[0] is SKIPPED:
                values.extend([None] * width)
                continue
            values.extend(sensor.decode(mine))
        return values

    def rows(self, raw: IO[bytes]) -> Iterator[tuple[int, list[int | float | None]]]:
        """``(t_ns, values)`` for each complete record of a raw stream, decoded in order (counters unwrap)."""
        for t_ns, blobs in self.records(raw):
            yield t_ns, self.decode_record(blobs)

    def decode(self, raw: IO[bytes], out: IO[str], header: bool = True) -> int:
        """Write the CSV rows of a raw stream; returns the number of rows."""
        if header:
            out.write(",".join(["t_ns", *self.meta.columns]) + "\n")
        rows = 0
        for t_ns, values in self.rows(raw):
            out.write(",".join([str(t_ns), *("" if v is None else str(v) for v in values)]) + "\n")
            rows += 1
        return rows

    def close(self) -> None:
        for handle, _, _ in self._files:
            if handle:
                handle.close()
        self._files = []


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class _WakeUp(Exception):
    """Raised by :meth:`Sampler.stop` in a handler that interrupts the loop's sleep."""


class SamplerProcess:
    """Launcher side: start the sampler process, wait until its first sample is on disk, stop it later."""

    def __init__(self, config: SamplerConfig) -> None:
        self.config = config
        self._proc: subprocess.Popen[str] | None = None

    def start(self, timeout_s: float = 30.0) -> SamplerProcess:
        payload = json.dumps(asdict(self.config))
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "edgebench.sensors.sampler", payload],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = _readline_with_timeout(self._proc, timeout_s)
        if line.strip() != "ready":
            self.kill()
            err = self._proc.stderr.read() if self._proc.stderr else ""
            raise RuntimeError(f"sampler failed to start: {(err or line).strip().splitlines()[-1:]}")
        return self

    def stop(self, timeout_s: float = 10.0) -> SamplerMeta:
        """SIGTERM, wait for the final row, and return the sampler's own account of the run."""
        assert self._proc is not None
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
        try:
            self._proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError("sampler did not stop within 10 s") from None
        return load_meta(self.config.meta_path)

    def kill(self) -> None:
        if self._proc and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


def _readline_with_timeout(proc: subprocess.Popen[str], timeout_s: float) -> str:
    import selectors

    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout_s):
            return ""
    return proc.stdout.readline()


def load_meta(path: Path) -> SamplerMeta:
    return SamplerMeta(**json.loads(Path(path).read_text()))


def main(argv: list[str] | None = None) -> int:
    die_with_parent()
    config_dict = json.loads((argv or sys.argv[1:])[0])
    config_dict["sensors"] = tuple(config_dict["sensors"])
    config = SamplerConfig(**config_dict)
    sampler = Sampler(config)
    signal.signal(signal.SIGTERM, sampler.stop)
    signal.signal(signal.SIGINT, sampler.stop)

    def ready() -> None:
        print("ready", flush=True)

    raw_path = Path(config.out_csv).with_suffix(".raw")
    try:
        with open(raw_path, "wb", buffering=1 << 16) as raw:
            meta = sampler.run(raw, on_first_sample=ready)
        # Decoding happens once the measurement is over, so it is not part of what the trial pays.
        with open(raw_path, "rb") as raw, open(config.out_csv, "w", encoding="ascii") as out:
            sampler.decode(raw, out)
    finally:
        sampler.close()
    tmp = config.meta_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(meta)))
    tmp.replace(config.meta_path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
