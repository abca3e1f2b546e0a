"""One monitoring run: the sampler's loop in this process, each record decoded and written out as it arrives.

The sampler's polling loop (:meth:`Sampler.run`) writes each raw record to a sink; here the sink decodes the record
at once and appends a row to ``samples.csv`` (every column) and ``freq_temperature.csv`` (the MNN-based suite's
format), and feeds the throttling tracker and the per-channel energy totals.  Decoding one record costs less than a
period, so it happens in the loop's slack without delaying the next poll, and nothing accumulates: memory stays
flat however long the run.  Files are flushed every second; Ctrl-C (or SIGTERM, or the end of ``--duration``)
stops the loop after one last record of every source, and every row is on disk when :func:`run_monitor` returns.
"""

from __future__ import annotations

import io
import json
import math
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from edgebench.formats.mnn_suite.monitor_csv import FreqTemperatureWriter
from edgebench.host.sysfs import SysFS
from edgebench.measure.throttling import ThrottleEpisode, ThrottleTracker, WindowAccumulator, untellable
from edgebench.records.sampling import SamplerMeta
from edgebench.sensors.base import PowerChannel
from edgebench.sensors.sampler import DEFAULT_SENSORS, Sampler, SamplerConfig
from edgebench.sensors.thermal_trips import read_throttle_reference

FILES = ("samples.csv", "freq_temperature.csv", "meta.json", "summary.json")


@dataclass(frozen=True)
class MonitorConfig:
    out_dir: Path
    interval_ms: float = 10.0
    #: stop after this long; ``None`` runs until Ctrl-C or SIGTERM
    duration_s: float | None = None
    sysfs_root: str = "/"
    pid: int | None = None
    sensors: tuple[str, ...] = DEFAULT_SENSORS
    #: temperature from which a held-down clock counts as throttling; ``None``: from the thermal trip points
    hot_c: float | None = None
    window_s: float = 1.0
    #: stop after this many samples (benchmarks simulate an hour at 10 ms by count)
    max_samples: int | None = None


class ChannelEnergy:
    """Energy of one power channel over the run, accumulated row by row (counter growth, or trapezoid of power)."""

    __slots__ = ("_first", "_last", "_last_p", "_last_t", "channel", "energy_j", "i_energy", "i_power", "t_first")

    def __init__(self, channel: PowerChannel, index: dict[str, int]) -> None:
        self.channel = channel
        self.i_energy = index.get(channel.energy_column or "")
        self.i_power = index.get(channel.power_column or "") if self.i_energy is None else None
        self._first: float | None = None
        self._last: float | None = None
        self._last_t: int | None = None
        self._last_p: float | None = None
        self.t_first: int | None = None
        self.energy_j = 0.0

    def feed(self, t_ns: int, values: list[int | float | None]) -> None:
        if self.i_energy is not None:
            v = values[self.i_energy]
            if v is not None:
                if self._first is None:
                    self._first, self.t_first = v, t_ns
                self._last, self._last_t = v, t_ns
                self.energy_j = (self._last - self._first) * self.channel.energy_unit_j
            return
        if self.i_power is None or values[self.i_power] is None:
            return
        p = values[self.i_power] / 1e3  # type: ignore[operator]
        if self._last_t is not None and self._last_p is not None:
            self.energy_j += (p + self._last_p) / 2 * (t_ns - self._last_t) / 1e9
        else:
            self.t_first = t_ns
        self._last_t, self._last_p = t_ns, p

    def summary(self) -> dict[str, Any]:
        span_s = (self._last_t - self.t_first) / 1e9 if self._last_t and self.t_first else 0.0
        return {
            "scope": self.channel.scope,
            "source": self.channel.source,
            "energy_j": self.energy_j if span_s > 0 else None,
            "avg_power_w": self.energy_j / span_s if span_s > 0 else None,
        }


class SamplingLoop(Protocol):
    """A sampling loop other than this process's own: the native sampler, here or on a device
    (:mod:`edgebench.monitor.native`).  ``sampler`` plans the records (nothing opened); ``sysfs`` is the files it
    reads, as this process sees them; ``run`` feeds every record to the sink until ``stop``."""

    sampler: Sampler
    sysfs: SysFS
    #: Why the records ended other than by a stop (a dropped connection); None after a stop.
    ended_by: str | None

    def run(self, sink: MonitorSink) -> SamplerMeta: ...
    def stop(self) -> None: ...


@dataclass
class MonitorSummary:
    out_dir: str
    samples: int = 0
    late_samples: int = 0
    duration_s: float = 0.0
    interval_ms: float = 0.0
    cpu_pct_of_core: float = 0.0
    #: Which sampler took the samples (``python``, ``native``) and why that one (see ``SamplerMeta``).
    sampler: str = "python"
    sampler_why: str | None = None
    stopped_by: str = ""
    sensors: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)
    hot_c: float = 0.0
    #: Throttling episodes; None where the device cannot tell (``throttling_unknown`` says why).
    throttling: list[dict[str, Any]] | None = field(default_factory=list)
    throttling_unknown: str | None = None
    energy: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


class MonitorSink:
    """Stands where the sampler's raw file would: decodes each record and writes the rows (see the module doc)."""

    def __init__(self, sampler: Sampler, out_dir: Path, tracker: ThrottleTracker, window_s: float) -> None:
        self.sampler = sampler
        columns = sampler.meta.columns
        index = {c: i for i, c in enumerate(columns)}
        self._csv = open(out_dir / "samples.csv", "w", encoding="ascii", buffering=1 << 16)  # noqa: SIM115
        self._csv.write(",".join(["t_ns", *columns]) + "\n")
        self._mnn_file = open(out_dir / "freq_temperature.csv", "w", encoding="ascii", buffering=1 << 16)  # noqa: SIM115
        self._mnn = FreqTemperatureWriter(self._mnn_file, columns)
        self.windows = WindowAccumulator(columns, window_s)
        self.tracker = tracker
        self.energy = [ChannelEnergy(PowerChannel(**c), index) for c in sampler.meta.power_channels]
        self.rows = 0
        self.first_t_ns: int | None = None
        self.last_t_ns: int | None = None
        self.stop_after: int | None = None

    def write(self, record: bytes) -> int:
        """A raw record of the sampler's loop (what its file would have been given)."""
        for t_ns, blobs in self.sampler.records(io.BytesIO(record)):
            self.feed(t_ns, blobs)
        return len(record)

    def feed(self, t_ns: int, blobs: list[bytes | None]) -> None:
        """One record's bytes per source (a native sampler's records, read elsewhere, come in here)."""
        values = self.sampler.decode_record(blobs)
        self._csv.write(",".join([str(t_ns), *("" if v is None else str(v) for v in values)]) + "\n")
        self._mnn.write(t_ns, values)
        window = self.windows.feed(t_ns, [math.nan if v is None else v for v in values])
        if window is not None:
            self.tracker.feed(window)
        for channel in self.energy:
            channel.feed(t_ns, values)
        self.rows += 1
        self.first_t_ns = self.first_t_ns if self.first_t_ns is not None else t_ns
        self.last_t_ns = t_ns
        if self.stop_after is not None and self.rows >= self.stop_after:
            self.sampler.stop(final_record=False)  # the budget's records are all in

    def flush(self) -> None:
        self._csv.flush()
        self._mnn_file.flush()

    def close(self) -> list[ThrottleEpisode]:
        if self.last_t_ns is not None and (window := self.windows.finish(self.last_t_ns)):
            self.tracker.feed(window)
        self._csv.close()
        self._mnn_file.close()
        return self.tracker.finish()


@contextmanager
def _stop_on_signals(stop: Callable[..., None], duration_s: float | None) -> Iterator[dict[str, str]]:
    """Ctrl-C, SIGTERM, SIGHUP (the terminal or SSH session closed) and the end of the duration each ask the loop to
    stop; the reason is recorded."""
    why = {"stopped_by": "end of the sample budget"}

    def handler(reason: str) -> Callable[..., None]:
        def on_signal(*_: object) -> None:
            why["stopped_by"] = reason
            stop()

        return on_signal

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM)}
    signal.signal(signal.SIGINT, handler("Ctrl-C"))
    signal.signal(signal.SIGTERM, handler("SIGTERM"))
    signal.signal(signal.SIGHUP, handler("SIGHUP"))
    signal.signal(signal.SIGALRM, handler("end of --duration"))
    if duration_s:
        signal.setitimer(signal.ITIMER_REAL, duration_s)
    try:
        yield why
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_monitor(
    config: MonitorConfig,
    on_start: Callable[[MonitorSummary], None] | None = None,
    on_throttle: Callable[[str, ThrottleEpisode], None] | None = None,
    loop: SamplingLoop | None = None,
) -> MonitorSummary:
    """Sample every available sensor into ``config.out_dir`` until the duration ends or a stop signal arrives;
    ``loop``: a native sampler's loop (here or on a device) in place of this process's Python one."""
    out = config.out_dir
    out.mkdir(parents=True, exist_ok=True)
    if loop is not None:
        sysfs, sampler = loop.sysfs, loop.sampler
    else:
        sysfs = SysFS(config.sysfs_root)
        sampler = Sampler(
            SamplerConfig(
                out_csv=str(out / "samples.csv"),
                interval_ms=config.interval_ms,
                sysfs_root=config.sysfs_root,
                sensors=config.sensors,
                pid=config.pid,
            )
        )
    reference = read_throttle_reference(sysfs, config.hot_c)
    policies, hot_c = reference.policies, reference.hot_c
    tracker = ThrottleTracker(
        policies,
        hot_c,
        on_start=(lambda e: on_throttle("start", e)) if on_throttle else None,
        on_end=(lambda e: on_throttle("end", e)) if on_throttle else None,
    )
    summary = MonitorSummary(
        out_dir=str(out),
        interval_ms=config.interval_ms,
        sensors=sampler.meta.sensors,
        unavailable=sampler.meta.unavailable,
        hot_c=hot_c,
        files=list(FILES),
        sampler=sampler.meta.kind,
        sampler_why=sampler.meta.why,
    )
    meta = {**asdict(sampler.meta), "policies": [asdict(p) for p in policies], "hot_c": hot_c}
    (out / "meta.json").write_text(json.dumps(meta, indent=2))
    sink = MonitorSink(sampler, out, tracker, config.window_s)
    sink.stop_after = config.max_samples
    if on_start:
        on_start(summary)
    episodes: list[ThrottleEpisode] = []
    try:
        with _stop_on_signals(loop.stop if loop else sampler.stop, config.duration_s) as why:
            run_meta = loop.run(sink) if loop else sampler.run(sink)  # type: ignore[arg-type]
    finally:
        episodes = sink.close()
        sampler.close()
    if loop is not None:  # its clocks' anchor and its cost are known only now
        meta = {**asdict(run_meta), "policies": [asdict(p) for p in policies], "hot_c": hot_c}
        (out / "meta.json").write_text(json.dumps(meta, indent=2))
    anchor = run_meta.anchor_wall_ns - run_meta.anchor_mono_ns
    summary.samples, summary.late_samples = run_meta.samples, run_meta.late_samples
    summary.sampler, summary.sampler_why = run_meta.kind, run_meta.why
    summary.cpu_pct_of_core = run_meta.cpu_pct_of_core
    summary.duration_s = ((sink.last_t_ns or 0) - (sink.first_t_ns or 0)) / 1e9
    summary.stopped_by = (loop.ended_by if loop else None) or why["stopped_by"]
    summary.throttling_unknown = untellable(sampler.meta.columns, reference)
    summary.throttling = (
        None
        if summary.throttling_unknown
        else [
            {
                **asdict(e),
                "duration_s": e.duration_s,
                "start": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime((e.start_ns + anchor) / 1e9)),
            }
            for e in episodes
        ]
    )
    summary.energy = {c.channel.name: c.summary() for c in sink.energy}
    (out / "summary.json").write_text(json.dumps(asdict(summary), indent=2))
    return summary
