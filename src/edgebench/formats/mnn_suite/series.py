"""The MNN-based suite's time-stamped files, from one trial's samples and events (or an imported trial's series).

What the suite's scripts read, with its meanings (its ``energy_compute.py``, ``dataprocess.py``, ``temperature.py``
and notebook; REFERENCE.md section 9):

* ``processed_data_<Net>.csv`` - one row per sample: ``stamp`` (epoch ms), ``processPid``, ``VIRT``/``RES``/``SHR``
  (MiB with top's ``M`` suffix), ``cpuUsage`` (the process's CPU time over the interval since the last reading,
  100 = one core, as top's ``%CPU``), and where a power rail was sampled ``battery_current`` (uA, positive while the
  battery feeds the device), ``battery_voltage`` (uV), ``usb_current`` (uA), ``usb_voltage`` (uV).  The rows start at
  the idle baseline, so the first rows are what ``energy_compute.py`` takes as its baseline.
* ``usage_monitor_<Net>.result`` - the same rows in the suite's raw monitor format, which its ``dataprocess.py``
  turns back into ``processed_data_<Net>.csv``.
* ``train_stamp_<bs>.result`` - the training run (warm-up included, as the suite's stamps bracket it) and the
  inference window, in epoch ms.
* ``freq_temperature.result`` / ``.csv`` - temperature (tenths of a degree C, the battery's where there is one) and
  ``cpu0`` .. ``cpu7`` ``scaling_cur_freq`` (kHz), one record per temperature reading.

A value the trial did not measure is ``nan``, the suite's own word for it; nothing is filled in.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from edgebench.measure.power import device_energy
from edgebench.records.events import Idle, Ready, Step, first, parse_events
from edgebench.records.result import TrialResult
from edgebench.records.sampling import SamplerMeta
from edgebench.sensors.samples import Samples, parse_samples, temperature_column
from edgebench.units import MIB

PROCESSED_COLUMNS = ("stamp", "processPid", "VIRT", "RES", "SHR", "cpuUsage")
POWER_COLUMNS = ("battery_current", "battery_voltage", "usb_current", "usb_voltage")
#: the suite's power column -> the sampler's (same units: uA, uV)
RAIL_COLUMNS = {
    "battery_current": "battery_current_ua",
    "battery_voltage": "battery_voltage_uv",
    "usb_current": "usb_current_ua",
    "usb_voltage": "usb_voltage_uv",
}
#: the suite's memory column -> the sampler's (``process_memory``: statm; ``process``: RSS from stat)
MEMORY_COLUMNS = {"VIRT": ("proc_virt_bytes",), "RES": ("proc_res_bytes", "proc_rss_bytes"), "SHR": ("proc_shr_bytes",)}
#: the frequency columns the suite always writes (its ``temperature.py`` lists eight)
SUITE_CPUS = tuple(f"cpu{i}" for i in range(8))
#: an imported trial keeps the suite's stamp file verbatim under this series name
TRAIN_STAMP_SERIES = "mnn_train_stamp"
#: the order the suite's monitor writes the rails in
_MONITOR_ORDER = ("usb_current", "usb_voltage", "battery_current", "battery_voltage")


def nan_or(value: float | None) -> str:
    """A cell as the suite writes it: ``nan`` for nothing, whole numbers without ``.0``, other floats in full."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value)) if isinstance(value, float) else str(value)


def mib_text(n_bytes: float | None) -> str:
    """top's memory text as the suite keeps it: MiB with an ``M`` (``66M``, ``5.6M``)."""
    if n_bytes is None or math.isnan(n_bytes):
        return "nan"
    mib = n_bytes / MIB
    return f"{mib:.0f}M" if mib >= 10 else f"{mib:.1f}M"


@dataclass(frozen=True)
class Windows:
    """The suite's stamps in epoch ms: the training run (warm-up included) and the inference, where measured."""

    train: tuple[int, int] | None
    infer: tuple[int, int] | None
    #: warm-up plus measured training steps: the batches the training window holds (the suite's ``batchnum``)
    train_batches: int = 0

    def stamp_text(self) -> str:
        lines = []
        if self.train:
            lines += [f"Begin training : {self.train[0]}", f"End trainning : {self.train[1]}"]
        if self.infer:
            lines += [f"Begin inferring : {self.infer[0]}", f"End inferring : {self.infer[1]}"]
        return "".join(line + "\n" for line in lines)


def parse_train_stamp(text: str) -> Windows:
    """The suite's ``train_stamp_<bs>.result``: ``Begin training : <ms>`` ... (its spelling ``trainning`` kept)."""
    stamps: dict[str, int] = {}
    for line in text.splitlines():
        label, _, value = line.partition(":")
        value = value.strip().split("N")[0]  # the suite strips a trailing 'N' the same way
        if value.isascii() and value.isdigit() and len(value) <= 16:  # ms since 1970; not '²', not 10**400
            stamps[label.strip()] = int(value)

    def span(begin: str, end: str) -> tuple[int, int] | None:
        return (stamps[begin], stamps[end]) if begin in stamps and end in stamps else None

    return Windows(span("Begin training", "End trainning"), span("Begin inferring", "End inferring"))


@dataclass
class TrialSeries:
    """One trial's samples on the wall clock (epoch ms), its windows, its pid and its baseline window."""

    result: TrialResult
    samples: Samples | None
    #: monotonic ns -> epoch ns; None where the trial kept no clock anchor (no sampler ran)
    wall_offset_ns: int | None
    windows: Windows
    pid: int | None = None
    idle_ns: tuple[int, int] | None = None
    #: monotonic ns bounds of the training run and inference (the events' clock)
    train_ns: tuple[int, int] | None = None
    #: an imported trial's stamp file, written back as the suite wrote it
    stamp_file: str | None = None

    def stamp_text(self) -> str:
        return self.stamp_file if self.stamp_file is not None else self.windows.stamp_text()

    def wall_ms(self, t_ns: np.ndarray | int) -> np.ndarray:
        assert self.wall_offset_ns is not None
        return (np.asarray(t_ns, dtype=np.int64) + self.wall_offset_ns) // 1_000_000

    @property
    def has_rails(self) -> bool:
        """Whether any power rail was read (an imported unrooted folder has the columns, all empty)."""
        s = self.samples
        return s is not None and any(
            c in s.columns and bool(np.any(~np.isnan(s.columns[c]))) for c in RAIL_COLUMNS.values()
        )

    def rows_start_ns(self) -> int | None:
        """Rows start at the idle baseline (what the suite's energy script averages first), else the first sample."""
        if self.samples is None or not len(self.samples):
            return None
        return self.idle_ns[0] if self.idle_ns else int(self.samples.t_ns[0])


def load_series(result: TrialResult, series: Callable[[str, str], str | None]) -> TrialSeries:
    """Samples, events and clock anchor of a stored trial; an imported trial brings its own stamp file."""
    meta_text = series(result.trial_id, "sampler_meta")
    meta = SamplerMeta(**json.loads(meta_text)) if meta_text else None
    text = series(result.trial_id, "samples")
    samples = parse_samples(text, meta) if text else None
    offset = (meta.anchor_wall_ns - meta.anchor_mono_ns) if meta and meta.anchor_wall_ns else None
    stamp = series(result.trial_id, TRAIN_STAMP_SERIES)
    if stamp is not None:  # imported: samples are stamped in epoch ns already
        windows = parse_train_stamp(stamp)
        train_ns = (windows.train[0] * 10**6, windows.train[1] * 10**6) if windows.train else None
        return TrialSeries(result, samples, 0, windows, train_ns=train_ns, stamp_file=stamp)
    events = parse_events(series(result.trial_id, "events"))
    steps = [e for e in events if isinstance(e, Step)]
    train = [s for s in steps if s.phase in ("warmup", "train")]
    infer = [s for s in steps if s.phase in ("infer_warmup", "infer")]
    train_ns = (train[0].start_ns, train[-1].end_ns) if train else None
    infer_ns = (infer[0].start_ns, infer[-1].end_ns) if infer else None

    def wall(span: tuple[int, int] | None) -> tuple[int, int] | None:
        if span is None or offset is None:
            return None
        return ((span[0] + offset) // 10**6, (span[1] + offset) // 10**6)

    ready, idle = first(events, Ready), first(events, Idle)
    return TrialSeries(
        result,
        samples,
        offset,
        Windows(wall(train_ns), wall(infer_ns), len(train)),
        pid=ready.pid if ready else None,
        idle_ns=(idle.start_ns, idle.end_ns) if idle else None,
        train_ns=train_ns,
    )


def run_energy_j(ts: TrialSeries) -> float | None:
    """The suite's ``batchsize_energy``: energy above the idle baseline over the whole training run (warm-up and
    measured steps, as its ``Begin training`` / ``End trainning`` stamps bracket it), from the trial's power source.

    An imported trial's figure is the one computed when it was imported (the same definition, on the suite's data).
    """
    if ts.result.imported_from is not None:
        return ts.result.energy.energy_j
    if ts.samples is None or ts.train_ns is None or len(ts.samples) < 2:
        return None
    figures = device_energy(ts.samples, ts.train_ns[0], ts.train_ns[1], ts.idle_ns)
    return None if figures is None or math.isnan(figures.active_j) else figures.active_j


def _cpu_pct(samples: Samples, clk_tck: int) -> np.ndarray:
    """Process CPU % (100 = one core) over the interval since the previous reading of its CPU ticks (an imported
    trial's rows carry top's own figure)."""
    if "proc_cpu_pct" in samples.columns:
        return samples.columns["proc_cpu_pct"]
    ut, st = samples.columns.get("proc_utime_ticks"), samples.columns.get("proc_stime_ticks")
    out = np.full(len(samples), np.nan)
    if ut is None or st is None:
        return out
    ticks = ut + st
    known = np.flatnonzero(~np.isnan(ticks))
    for prev, cur in itertools.pairwise(known):
        dt_s = (samples.t_ns[cur] - samples.t_ns[prev]) / 1e9
        if dt_s > 0:
            out[cur] = 100.0 * (ticks[cur] - ticks[prev]) / clk_tck / dt_s
    return out


@dataclass(frozen=True)
class SampleRow:
    stamp_ms: int
    pid: int | None
    virt: float | None
    res: float | None
    shr: float | None
    cpu_pct: float | None
    rails: dict[str, float | None]


def sample_rows(ts: TrialSeries) -> list[SampleRow]:
    """The trial's samples from its idle baseline on, as the suite's monitor rows."""
    s = ts.samples
    start = ts.rows_start_ns()
    if s is None or start is None or ts.wall_offset_ns is None:
        return []
    keep = s.t_ns >= start
    clk = s.meta.clk_tck if s.meta else 100
    cpu = _cpu_pct(s, clk)
    stamps = ts.wall_ms(s.t_ns)

    def column(names: tuple[str, ...]) -> np.ndarray | None:
        return next((s.columns[n] for n in names if n in s.columns), None)

    memory = {k: column(v) for k, v in MEMORY_COLUMNS.items()}
    rails = {k: s.columns.get(v) for k, v in RAIL_COLUMNS.items()}

    def at(values: np.ndarray | None, i: int) -> float | None:
        return None if values is None or math.isnan(values[i]) else float(values[i])

    rows = []
    for i in np.flatnonzero(keep):
        rows.append(
            SampleRow(
                int(stamps[i]),
                ts.pid,
                at(memory["VIRT"], i),
                at(memory["RES"], i),
                at(memory["SHR"], i),
                at(cpu, i),
                {k: at(v, i) for k, v in rails.items()},
            )
        )
    return rows


def processed_data_csv(rows: list[SampleRow], with_power: bool) -> str:
    """``processed_data_<Net>.csv`` as the suite's ``dataprocess.py`` (rooted) or ``_unroot.py`` writes it."""
    header = ["", *PROCESSED_COLUMNS, *(POWER_COLUMNS if with_power else ())]
    lines = [",".join(header)]
    for n, r in enumerate(rows, start=1):
        cells = [str(n), str(r.stamp_ms), nan_or(r.pid), mib_text(r.virt), mib_text(r.res), mib_text(r.shr)]
        cells.append(nan_or(r.cpu_pct))
        if with_power:
            cells += [nan_or(r.rails[c]) for c in POWER_COLUMNS]
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


def usage_monitor_text(rows: list[SampleRow], with_power: bool) -> str:
    """The suite's raw ``usage_monitor_<Net>.result``: the records its ``dataprocess.py`` parses.

    Each record is ``NEW DATA <ms>``, the rail readings (rooted), the process's top line (``<pid> shell ... VIRT RES
    SHR S %CPU``) where it was read, and ``END``.  Parts the suite read but its scripts ignore (/proc/stat, meminfo)
    are left out.
    """
    out = ["------------Usage Stats-------------", "", ""]
    for r in rows:
        out.append(f"NEW DATA {r.stamp_ms}")
        if with_power:
            out += [f"{c} {nan_or(r.rails[c])}" for c in _MONITOR_ORDER if r.rails[c] is not None]
        if r.cpu_pct is not None and r.virt is not None:
            pid = nan_or(r.pid)
            out.append(f"Running Code: status of pid {pid}")
            memory = f"{mib_text(r.virt)} {mib_text(r.res)} {mib_text(r.shr)}"
            out.append(f" {pid} shell 20 0 {memory} R {nan_or(r.cpu_pct)} 0.0 0:00.00 edgebench")
        out += ["", "END", "", ""]
    return "\n".join(out)


@dataclass(frozen=True)
class FreqRow:
    stamp_ms: int
    temperature: int | None
    freqs: dict[str, int | None]


def freq_rows(ts: TrialSeries) -> list[FreqRow]:
    """One row per temperature reading (every sample where the device has no temperature), epoch ms."""
    s = ts.samples
    if s is None or ts.wall_offset_ns is None or not len(s):
        return []
    temp = temperature_column(list(s.columns))
    freqs = {cpu: s.columns.get(f"{cpu}_freq_khz") for cpu in SUITE_CPUS}
    if temp is None and all(v is None for v in freqs.values()):
        return []
    rows_at = np.flatnonzero(~np.isnan(s.columns[temp])) if temp else np.arange(len(s))
    stamps = ts.wall_ms(s.t_ns)
    out = []
    for i in rows_at:
        t = None if temp is None else round(float(s.columns[temp][i]) / 100)  # m degC -> tenths, as dumpsys
        f = {c: None if v is None or math.isnan(v[i]) else int(v[i]) for c, v in freqs.items()}
        out.append(FreqRow(int(stamps[i]), t, f))
    return out


def freq_temperature_result(rows: list[FreqRow]) -> str:
    """The raw file the suite's ``temperature.py`` reads (``./freq_temperature.result``)."""
    out = ["------------Frequency Stats-------------", "", ""]
    for r in rows:
        out.append(f"NEW DATA {r.stamp_ms}")
        if r.temperature is not None:
            out.append(f"Current Battery Service state: temperature: {r.temperature}")
        out += [f"{c} {v}" for c, v in r.freqs.items() if v is not None]
        out += ["", "END", "", ""]
    return "\n".join(out)


def freq_temperature_csv(rows: list[FreqRow]) -> str:
    """``freq_temperature.csv`` as the suite's ``temperature.py`` writes it: stamp in ms since the first record."""
    lines = [",".join(["", "stamp", "temperature", *SUITE_CPUS])]
    t0 = rows[0].stamp_ms if rows else 0
    for n, r in enumerate(rows, start=1):
        cells = [str(n), str(r.stamp_ms - t0), nan_or(r.temperature), *(nan_or(r.freqs[c]) for c in SUITE_CPUS)]
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"


#: The line an edgebench export adds to ``train_bench``: the batches its run trained (warm-up and measured), where
#: the suite's own binary runs one more (``warmUp + measureIteration + 1``); its scripts read no such line.
BATCHES_LINE = "edgebench batches:"


def measured_steps(r: TrialResult) -> int:
    """The steps the trial measured (``--min-time`` may run more than the ``steps`` asked), else those asked."""
    if r.latency.measured_steps is not None:
        return r.latency.measured_steps
    return r.latency.step_ms.n if r.latency.step_ms is not None else r.trial.steps


def train_bench_text(net: str, by_batch: list[tuple[int, TrialResult]]) -> str:
    """The lines of the suite's ``train_bench_<Net>.result`` its ``dataprocess.py`` reads (six decimals, as printed):
    ``measureIteration`` is the steps measured, and an edgebench trial says how many batches its run trained."""
    lines = []
    for batch, r in by_batch:
        lines.append(f" warmUp: {r.trial.warmup} ")
        lines.append(f" measureIteration: {measured_steps(r)} ")
        if r.imported_from is None:
            lines.append(f" {BATCHES_LINE} {r.trial.warmup + measured_steps(r)} ")
        if r.latency.step_ms is not None:
            lines.append(f"Training latency of {net} is : {r.latency.step_ms.mean:.6f} ms (batchsize is {batch})")
        if r.latency.infer_ms is not None:
            lines.append(f"Inferring latency of {net} is : {r.latency.infer_ms.mean:.6f} ms (batchsize is {batch})")
    return "".join(line + "\n" for line in lines)


#: ``bench_session.result`` holds MNN's session benchmark (``session_infer``), which edgebench does not run: the
#: file says so, and the suite's ``dataprocess.py`` finds no line for any model, leaving the column ``nan``.
BENCH_SESSION_TEXT = "edgebench measured no MNN session inference: session_infer is nan\n"
