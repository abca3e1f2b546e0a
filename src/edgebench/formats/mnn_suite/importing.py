"""Trials from a result folder of the MNN-based suite (``MEIZU_Freq_1708800/``, ``MEIZU_Core_f0/``, ``XIAOMI/``).

One trial per ``train_stamp/<Net>/train_stamp_<bs>.result`` with a training latency for that batch size in
``train_bench/train_bench_<Net>.result``; each holds what the suite measured and nothing else:

* ``step_time_ms`` / ``infer_time_ms``: the suite's printed means over ``measureIteration`` steps after ``warmUp``
  (its benchmark keeps no other statistic, so median, percentiles and spread stay empty).
* the monitor's samples (``processed_data_<Net>.csv``, or ``usage_monitor_<Net>.result`` where that was not
  processed): each row of the net's file goes to the first trial whose ``End inferring`` is at or after it, so the
  trials of a net together hold the whole file (its idle rows before the first batch size included) and an export
  writes it back whole.  The train-stamp file is kept verbatim.
* energy as the suite defines it: above its idle baseline (the first 10 samples of Lenet's monitor, as its
  ``energy_compute.py`` takes them) over the whole training run, integrated from its USB readings (uA x uV);
  per batch divides by the run's batches (``warmUp + measureIteration + 1``: its training loop runs one more; an
  edgebench export says its own count on an ``edgebench batches:`` line).
* ``VIRT``, ``RES``, CPU usage: its ``performance_<Net>.csv`` where present; ``session_infer`` from its
  ``time_table_<Net>.csv``, else ``bench_session.result`` (kept in ``env``; edgebench has no MNN session benchmark).

The folder name gives the core mask (``_Core_f0``, kept as typed) or the pinned frequency (``_Freq_1708800``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.errors import UsageError, shortened
from edgebench.formats.mnn_suite.export import SUITE_NETS
from edgebench.formats.mnn_suite.series import BATCHES_LINE, TRAIN_STAMP_SERIES, Windows, parse_train_stamp
from edgebench.host.cpuset import parse_cores
from edgebench.measure.power import above_idle, integrate_power_j
from edgebench.records.device import DeviceEnvironment
from edgebench.records.result import Cpu, Latency, MeasuredEnergy, Memory, Stats, TrialResult, stored_trial
from edgebench.records.sampling import SamplerMeta
from edgebench.sensors.base import PowerChannel
from edgebench.units import MAX_QUANTITY, MIB

#: the suite's net name -> edgebench's model
MODELS = {net: model for model, net in SUITE_NETS.items()}
#: rows the suite's energy script averages for its idle baseline (``perform.loc[:10]`` of a frame indexed from 1)
BASELINE_ROWS = 10
_FOLDER = re.compile(r"^(?P<device>.+?)(?:_Core_(?P<mask>(?:0x)?[0-9a-fA-F]+)|_Freq_(?P<freq>\d+))?$")
#: The suite's demos print their means in more than one wording (MnistBenchmarkUtils.cpp: ``Training latency of
#: %s is : %f ms (batchsize is %d)``; mobilenetV2BenchmarkUtils.cpp: ``Training latency on MobilenetV2Train is :
#: ...``; the older benchmark_batchsize.txt: ``Training latency of Lenet on Mnist is : ...``): every one is read.
_LATENCY = re.compile(
    r"^(Training|Inferring) latency (?:of|on) (\S+)(?: on \S+)? is\s*:\s*([\d.]+) ms \(batchsize is (\d+)\)"
)
_SESSION = re.compile(r"\.(\w+?)_(\d+)\.mnn\s.*avg =\s*([\d.]+)ms")
SAMPLE_COLUMNS = (
    "usb_current_ua", "usb_voltage_uv", "usb_power_mw", "battery_current_ua", "battery_voltage_uv",
    "proc_virt_bytes", "proc_res_bytes", "proc_shr_bytes", "proc_cpu_pct",
)  # fmt: skip
USB_CHANNEL = PowerChannel("usb input", "power_supply", "total", power_column="usb_power_mw")


@dataclass(frozen=True)
class Row:
    """One monitor record: epoch ms and the values it held (None where the suite wrote ``nan``)."""

    stamp_ms: int
    values: dict[str, float | None]


@dataclass(frozen=True)
class Bench:
    warmup: int
    steps: int
    train_ms: float | None = None
    infer_ms: float | None = None
    #: The batches the run trained, where its file says (an edgebench export); else the suite's own binary's
    #: ``warmUp + measureIteration + 1``.
    batches: int | None = None

    @property
    def run_batches(self) -> int:
        return self.batches if self.batches is not None else self.warmup + self.steps + 1


def _float(text: str | None) -> float | None:
    if text is None:
        return None
    text = text.strip()
    if not text or text.lower() == "nan" or text == "R":
        return None
    scale = 1.0
    if text[-1] in "MGK":
        scale = {"K": 1 / 1024, "M": 1.0, "G": 1024.0}[text[-1]] * MIB
        text = text[:-1]
    try:
        value = float(text) * scale
    except ValueError:
        return None
    return value if math.isfinite(value) and abs(value) <= MAX_QUANTITY else None  # inf, nan, 1e400: no value


def _row(stamp: str, cells: dict[str, str | None]) -> Row | None:
    ms = _float(stamp)
    if ms is None:
        return None
    values = {
        "usb_current_ua": _float(cells.get("usb_current")),
        "usb_voltage_uv": _float(cells.get("usb_voltage")),
        "battery_current_ua": _float(cells.get("battery_current")),
        "battery_voltage_uv": _float(cells.get("battery_voltage")),
        "proc_virt_bytes": _float(cells.get("VIRT")),
        "proc_res_bytes": _float(cells.get("RES")),
        "proc_shr_bytes": _float(cells.get("SHR")),
        "proc_cpu_pct": _float(cells.get("cpuUsage")),
    }
    ua, uv = values["usb_current_ua"], values["usb_voltage_uv"]
    values["usb_power_mw"] = ua * uv / 1e9 if ua is not None and uv is not None else None
    return Row(int(ms), values)


def read_processed_data(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.DictReader(f)
        if "stamp" not in (reader.fieldnames or ()):
            raise UsageError("DIR", f"{path} has no stamp column: not the suite's processed_data file")
        return [r for r in (_row(cells["stamp"], cells) for cells in reader) if r is not None]


def read_usage_monitor(path: Path) -> list[Row]:
    """The suite's raw monitor records: ``NEW DATA <ms>``, rail lines, top's line for the process, ``END``."""
    rows: list[Row] = []
    stamp: str | None = None
    cells: dict[str, str | None] = {}
    for line in path.read_text(errors="replace").splitlines():
        words = line.split()
        if "NEW DATA" in line and len(words) >= 3:
            stamp, cells = words[2].split("N")[0], {}
        elif words and words[0] in ("usb_current", "usb_voltage", "battery_current", "battery_voltage"):
            cells[words[0]] = words[1] if len(words) > 1 else None
        elif "shell" in words:
            at = words.index("shell")
            if len(words) > at + 7:
                cells.update(VIRT=words[at + 3], RES=words[at + 4], SHR=words[at + 5], cpuUsage=words[at + 7])
        elif "END" in line and stamp is not None:
            row = _row(stamp, cells)
            if row is not None:
                rows.append(row)
            stamp = None
    return rows


def read_train_bench(path: Path) -> dict[int, Bench]:
    """Per batch size: the ``warmUp`` / ``measureIteration`` lines before its latency lines, and the latencies."""
    out: dict[int, Bench] = {}
    warmup = steps = batches = None
    marker = BATCHES_LINE.split()
    for line in path.read_text(errors="replace").splitlines():
        words = line.split()
        if words[:1] == ["warmUp:"] and len(words) > 1 and words[1].isdecimal():
            warmup, batches = int(words[1]), None
        elif words[:1] == ["measureIteration:"] and len(words) > 1 and words[1].isdecimal():
            steps = int(words[1])
        elif words[: len(marker)] == marker and len(words) > len(marker) and words[len(marker)].isdecimal():
            batches = int(words[len(marker)])
        elif (m := _LATENCY.match(line.strip())) and _float(m.group(3)) is not None:  # '.' matches, is no number
            kind, _, ms, bs = m.groups()
            batch = int(bs)
            bench = out.get(batch) or Bench(warmup or 0, steps or 0, batches=batches)
            field = "train_ms" if kind == "Training" else "infer_ms"
            out[batch] = Bench(bench.warmup, bench.steps, **{**_latencies(bench), field: _float(ms)},
                               batches=bench.batches)  # fmt: skip
    return out


def _latencies(bench: Bench) -> dict[str, float | None]:
    return {"train_ms": bench.train_ms, "infer_ms": bench.infer_ms}


def read_session(path: Path) -> dict[tuple[str, int], float]:
    """``bench_session.result``: MNN's session benchmark, ``temp.<Net>_<bs>.mnn ... avg = <ms>ms``."""
    if not path.is_file():
        return {}
    return {
        (m.group(1), int(m.group(2))): float(m.group(3))
        for line in path.read_text(errors="replace").splitlines()
        if (m := _SESSION.search(line))
    }


def read_performance(path: Path) -> dict[int, dict[str, str]]:
    """Rows of one of the suite's per-batch-size tables (``performance_<Net>.csv``, ``time_table_<Net>.csv``)."""
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        rows = [(_float(r.get("batchsize")), r) for r in csv.DictReader(f)]
    return {int(batch): r for batch, r in rows if batch is not None and batch == int(batch) and batch >= 1}


def _samples_csv(rows: list[Row]) -> str:
    lines = [",".join(["t_ns", *SAMPLE_COLUMNS])]
    for r in rows:
        cells = ["" if r.values.get(c) is None else repr(r.values[c]) for c in SAMPLE_COLUMNS]
        lines.append(",".join([str(r.stamp_ms * 10**6), *cells]))
    return "\n".join(lines) + "\n"


def _meta(rows: list[Row], folder: str) -> str:
    gaps = np.diff([r.stamp_ms for r in rows]) if len(rows) > 1 else np.array([0.0])
    meta = SamplerMeta(
        interval_ms=float(np.median(gaps)),
        columns=list(SAMPLE_COLUMNS),
        sensors=["mnn-suite monitor"],
        unavailable={},
        labels={"usb_power_mw": f"USB input ({folder}: usb_current x usb_voltage)"},
        samples=len(rows),
        power_channels=[asdict(USB_CHANNEL)],
    )
    return json.dumps(asdict(meta))


def _power_w(rows: list[Row]) -> tuple[np.ndarray, np.ndarray]:
    """USB power in W at each row where both readings exist, on an ns axis."""
    kept = [(r.stamp_ms * 10**6, r.values["usb_power_mw"] / 1e3) for r in rows if r.values["usb_power_mw"] is not None]
    if not kept:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    t, p = zip(*kept, strict=True)
    return np.array(t, dtype=np.int64), np.array(p)


def _baseline(rows: list[Row]) -> tuple[float, float] | None:
    """The suite's idle baseline: mean USB current x mean USB voltage of the first rows (W), and their span (s)."""
    first = rows[:BASELINE_ROWS]
    ua = [r.values["usb_current_ua"] for r in first if r.values["usb_current_ua"] is not None]
    uv = [r.values["usb_voltage_uv"] for r in first if r.values["usb_voltage_uv"] is not None]
    if not ua or not uv:
        return None
    return float(np.mean(ua)) * float(np.mean(uv)) / 1e12, (first[-1].stamp_ms - first[0].stamp_ms) / 1e3


def _partition(rows: list[Row], ends: list[tuple[int, int]]) -> dict[int, list[Row]]:
    """Each row to the first batch size (by ``End inferring`` / ``End trainning``) that ends at or after it."""
    out: dict[int, list[Row]] = {bs: [] for bs, _ in ends}
    order = sorted(ends, key=lambda e: e[1])
    for row in rows:
        bs = next((b for b, end in order if row.stamp_ms <= end), order[-1][0])
        out[bs].append(row)
    return out


def _trial_id(folder: str, device: str, net: str, batch: int, begin_ms: int) -> str:
    when = datetime.fromtimestamp(begin_ms / 1e3, timezone.utc).strftime("%Y%m%d-%H%M%S")
    digest = hashlib.sha256(f"mnn-suite:{device}:{folder}:{net}:{batch}".encode()).hexdigest()[:8]
    return f"{when}-{digest}"


@dataclass
class Imported:
    trials: list[tuple[TrialResult, dict[str, str]]]
    skipped: list[str]


def read_folder(folder: Path, device: str) -> Imported:
    """Every trial of one suite result folder, with its series; nothing is stored here.  Files other people edited
    or damaged (junk cells, another encoding, a stamp past any clock) are one line naming the folder, never a
    traceback."""
    try:
        return _read_folder(folder, device)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, ZeroDivisionError) as exc:
        raise UsageError(
            "DIR",
            f"{folder} cannot be read as the suite's result folder ({type(exc).__name__}: "
            f"{shortened(str(exc).strip().splitlines()[0] if str(exc).strip() else '', 120)})",
        ) from None


def _read_folder(folder: Path, device: str) -> Imported:
    if not folder.is_dir():
        raise UsageError("DIR", f"{folder} is not a folder; give a suite result folder such as MEIZU_Freq_1708800/")
    stamps_root = folder / "train_stamp"
    if not stamps_root.is_dir():
        raise UsageError("DIR", f"{folder} has no train_stamp/ folder: not a result folder of the MNN-based suite")
    name = folder.resolve().name
    session = read_session(folder / "bench_session.result")
    nets = sorted((p.name for p in stamps_root.iterdir() if p.is_dir()), key=_net_order)
    rows_of = {net: _rows(folder, net) for net in nets}
    baseline_net = "Lenet" if rows_of.get("Lenet") else next((n for n in nets if rows_of[n]), None)
    baseline = _baseline(rows_of[baseline_net]) if baseline_net else None
    out = Imported([], [])
    for net in nets:
        bench_path = folder / "train_bench" / f"train_bench_{net}.result"
        bench = read_train_bench(bench_path) if bench_path.is_file() else {}
        performance = read_performance(folder / "processed_data" / net / f"performance_{net}.csv")
        # session_infer as the suite's own time table reported it, else from the session benchmark's log (the two
        # disagree where the log was overwritten by a later run, as in the suite's MEIZU_Freq_1708800)
        table = read_performance(folder / "processed_data" / net / f"time_table_{net}.csv")
        for batch, row in table.items():
            ms = _float(row.get("session_infer"))
            if ms is not None:
                session[(net, batch)] = ms
        stamps: dict[int, tuple[str, Windows]] = {}
        for path in sorted(stamps_root.joinpath(net).glob("train_stamp_*.result")):
            batch_text = path.stem.rpartition("_")[2]
            if batch_text.isdigit():
                text = path.read_text(errors="replace")
                stamps[int(batch_text)] = (text, parse_train_stamp(text))
        stamps = dict(sorted(stamps.items()))  # by batch size, not by file name (train_stamp_16 before _2)
        for batch in list(stamps):
            windows = stamps[batch][1]
            if batch not in bench or bench[batch].train_ms is None or windows.train is None:
                why = "no training latency in train_bench" if windows.train else "no training window in its stamp file"
                out.skipped.append(f"{name}: {net} batch {batch}: {why}")
                del stamps[batch]
        ends = [(b, (w.infer or w.train or (0, 0))[1]) for b, (_, w) in stamps.items()]
        parts = _partition(rows_of[net], ends) if ends else {}
        for batch, (text, windows) in stamps.items():
            assert windows.train is not None
            result = _result(name, device, net, batch, bench[batch], windows.train, parts.get(batch, []), baseline)
            memory, cpu = _performance(performance.get(batch))
            extra: dict[str, Any] = {"memory": memory, "cpu": cpu}
            if (net, batch) in session:
                extra["device"] = result.device.model_copy(
                    update={"extra": {**result.device.extra, "mnn_suite_session_infer_ms": session[(net, batch)]}}
                )
            result = result.model_copy(update=extra)
            series = {TRAIN_STAMP_SERIES: text}
            if parts.get(batch):
                series.update(samples=_samples_csv(parts[batch]), sampler_meta=_meta(rows_of[net], name))
            out.trials.append((TrialResult.model_validate(result.model_dump()), series))
    if not out.trials:
        raise UsageError("DIR", f"{folder}: no batch size has both a train_stamp file and a latency in train_bench")
    return out


def _net_order(net: str) -> tuple[int, str]:
    order = list(MODELS)
    return (order.index(net), net) if net in order else (len(order), net)


def _rows(folder: Path, net: str) -> list[Row]:
    processed = folder / "processed_data" / net / f"processed_data_{net}.csv"
    if processed.is_file():
        return read_processed_data(processed)
    monitor = folder / "usage_monitor" / f"usage_monitor_{net}.result"
    return read_usage_monitor(monitor) if monitor.is_file() else []


def _stats(mean_ms: float, n: int) -> Stats:
    return Stats(mean=mean_ms, n=n)


def _result(
    folder: str,
    device: str,
    net: str,
    batch: int,
    bench: Bench,
    train_ms: tuple[int, int],
    rows: list[Row],
    baseline: tuple[float, float] | None,
) -> TrialResult:
    assert bench.train_ms is not None
    m = _FOLDER.match(folder)
    assert m is not None  # the pattern's suffixes are optional: every name matches
    mask, freq = m.group("mask"), m.group("freq")
    # the suite's trial as recorded: its model and backend are not looked up (another tool ran them)
    trial = stored_trial(
        {
            "model": MODELS.get(net, net.lower()),
            "batch_size": batch,
            "threads": None,
            "cores": list(parse_cores(mask)) if mask else None,
            "cores_mask": mask,
            "freq_khz": int(freq) if freq else None,
            "steps": bench.steps,
            "warmup": bench.warmup,
            "backend": "mnn",
        }
    )
    latency = Latency(
        step_ms=_stats(bench.train_ms, bench.steps),
        infer_ms=_stats(bench.infer_ms, bench.steps) if bench.infer_ms is not None else None,
        throughput_sps=batch * 1e3 / bench.train_ms,
        measured_steps=bench.steps,
    )
    return TrialResult(
        trial_id=_trial_id(folder, device, net, batch, train_ms[0]),
        status="ok",
        trial=trial,
        started_at=datetime.fromtimestamp(train_ms[0] / 1e3, timezone.utc).isoformat(timespec="seconds"),
        stopped_by=f"fixed: {bench.steps} steps",
        latency=latency,
        device=DeviceEnvironment(hostname=device),
        target=device,
        imported_from=f"mnn-suite:{folder}",
        energy=_energy(rows, train_ms, baseline, bench, batch),
    )


def _energy(
    rows: list[Row], train_ms: tuple[int, int], baseline: tuple[float, float] | None, bench: Bench, batch: int
) -> MeasuredEnergy:
    """The suite's ``batchsize_energy`` on its own readings: the training run above its idle baseline."""
    t, watts = _power_w(rows)
    t0, t1 = train_ms[0] * 10**6, train_ms[1] * 10**6
    inside = (t > t0) & (t < t1)
    if not inside.any():
        return MeasuredEnergy()  # no USB reading inside the window: nothing to integrate
    gross = integrate_power_j(t, watts, t0, t1)
    if math.isnan(gross):
        return MeasuredEnergy()
    window_s = (t1 - t0) / 1e9
    idle_w = baseline[0] if baseline else None
    energy = above_idle(gross, idle_w, window_s)
    batches = bench.run_batches  # the suite's training loop runs warmUp + measureIterations + 1 batches
    counted = "warmUp + measureIteration + 1" if bench.batches is None else "warmUp + measureIteration: edgebench's run"
    notes = [
        "imported from the MNN-based suite: energy over its whole training run (warm-up included) from its USB "
        f"readings, above its idle baseline (the first 10 samples of Lenet's monitor); per step: / {batches} batches "
        f"({counted})"
    ]
    if idle_w is None:
        notes.append("no USB reading in the baseline rows: energy_j is not idle-subtracted")
    return MeasuredEnergy(
        energy_j=energy,
        per_step_j=energy / batches,
        per_sample_j=energy / (batches * batch),
        gross_j=gross,
        window_s=window_s,
        idle_power_w=idle_w,
        idle_window_s=baseline[1] if baseline else None,
        avg_power_w=gross / window_s,
        source="power_supply: usb input (power samples)",
        notes=notes,
    )


def _performance(row: dict[str, str] | None) -> tuple[Memory, Cpu]:
    """The suite's ``performance`` row: maxima of top's VIRT and RES (MB) and mean CPU% over its windows."""
    if not row:
        return Memory(), Cpu()
    memory: dict[str, Any] = {}
    virt, res = _float(row.get("VIRT")), _float(row.get("RES"))
    if virt:
        memory["virtual_peak_bytes"] = round(virt * MIB)
    if res:
        memory["peak_bytes"] = round(res * MIB)
        memory["peak_source"] = "mnn-suite: top RES, the largest over the training and inference windows"
    cpu: dict[str, Any] = {}
    for field, column in (("process_pct", "cpuUsage_train"), ("infer_process_pct", "cpuUsage_infer")):
        value = _float(row.get(column))
        if value:  # the suite writes 0 where it saw no top reading in the window
            cpu[field] = value
    return Memory(**memory), Cpu(**cpu)
