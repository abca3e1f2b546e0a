"""The MNN-based suite's result files, written from stored trials, so its users' scripts and plots keep working.

Layout, names and columns are the suite's own (its ``dataprocess.py`` and ``energy_compute.py`` write them with
pandas; REFERENCE.md section 1)::

    OUT/<Device>_Core_<mask>/processed_data/<Net>/time_table_<Net>.csv   ,batchsize,expr_train,expr_infer,session_infer
    OUT/<Device>_Core_<mask>/processed_data/<Net>/performance_<Net>.csv  ,batchsize,VIRT,RES,SHR,cpuUsage_train,...
    OUT/batchsize_energy_<Device>_Core_<mask>.csv                        ,Lenet,GoogLenet,Squeezenet,Alexnet,Mobilenet
    OUT/singleBatch_energy_<Device>_Core_<mask>.csv, OUT/singleSample_energy_<Device>_Core_<mask>.csv

A trial run at a pinned frequency goes to ``<Device>_Freq_<kHz>`` instead (the suite's frequency sweep).  The
suite names its energy files after the folder it read (``batchsize_energy_MEIZU_Freq_1708800.csv``) and leaves
them beside the folders; so do we.  Where two groups of trials would share a folder name (two thread counts on
one mask, say), the name gains what tells them apart (``_Threads_2``, ``_Core_f0``, ``_bf16``).

Values: a cell is empty where the trial did not measure it (no power sensor, no MNN session inference) - never a
made-up number.  When a configuration was measured more than once, the latest trial is the one written.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.errors import UsageError
from edgebench.host.cpuset import format_mask
from edgebench.measure.energy import per_step_and_sample
from edgebench.outputs import write_text_replacing
from edgebench.result import TrialResult
from edgebench.runner.events import parse_events, steps_of
from edgebench.sensors.samples import parse_samples

#: edgebench model -> the suite's network name, in the suite's column order.
SUITE_NETS = {
    "lenet": "Lenet",
    "googlenet": "GoogLenet",
    "squeezenet": "Squeezenet",
    "alexnet": "Alexnet",
    "mobilenet_v2": "Mobilenet",
}
TIME_COLUMNS = ("batchsize", "expr_train", "expr_infer", "session_infer")
PERFORMANCE_COLUMNS = (
    "batchsize", "VIRT", "RES", "SHR", "cpuUsage_train", "cpuUsage_infer",
    "battery_current", "battery_voltage", "usb_current", "usb_voltage",
)  # fmt: skip
#: The suite's power columns (uA, uV) and the sampler columns they are read from, as the suite computes them:
#: the maximum over the training window.
POWER_COLUMNS = {
    "battery_current": "battery_current_ua",
    "battery_voltage": "battery_voltage_uv",
    "usb_current": "usb_current_ua",
    "usb_voltage": "usb_voltage_uv",
}
ENERGY_FILES = (
    ("batchsize_energy", "energy_j"),
    ("singleBatch_energy", "energy_per_step_j"),
    ("singleSample_energy", "energy_per_sample_j"),
)
_MIB = 2**20
_DEVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

SeriesLoader = Callable[[str, str], str | None]


def suite_net(model: str) -> str:
    return SUITE_NETS.get(model, model)


@dataclass(frozen=True, order=True)
class Setting:
    """What a result folder holds fixed: the suite's folders differ by core mask or frequency; ours may differ more."""

    mask: str
    freq_khz: int
    threads: int
    precision: str
    backend: str
    device: str

    @classmethod
    def of(cls, r: TrialResult) -> Setting:
        return cls(
            mask=format_mask(r.cores) if r.cores else "all",
            freq_khz=r.freq_khz or 0,
            threads=r.threads or 0,
            precision=r.precision,
            backend=r.backend,
            device=r.device,
        )


def folder_names(device: str, settings: Iterable[Setting]) -> dict[Setting, str]:
    """``<Device>_Core_<mask>`` or ``<Device>_Freq_<kHz>``, plus what tells apart settings that would collide."""
    groups: dict[str, list[Setting]] = {}
    for s in sorted(set(settings)):
        base = f"{device}_Freq_{s.freq_khz}" if s.freq_khz else f"{device}_Core_{s.mask}"
        groups.setdefault(base, []).append(s)
    names: dict[Setting, str] = {}
    for base, members in groups.items():
        varies = {
            attr
            for attr in ("mask", "threads", "precision", "backend", "device")
            if len({getattr(m, attr) for m in members}) > 1
        }
        for s in members:
            name = base
            if "mask" in varies and s.freq_khz:
                name += f"_Core_{s.mask}"
            if "threads" in varies:
                name += f"_Threads_{s.threads}"
            for attr in ("precision", "backend", "device"):
                if attr in varies:
                    name += "_" + getattr(s, attr).replace(":", "")
            names[s] = name
    return names


def _number(value: Any) -> str:
    """As pandas writes a cell: floats in full (shortest round-trip), integers as integers, nothing as empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return repr(float(value)) if isinstance(value, float) else str(value)


def _csv(header: list[str], rows: list[list[Any]]) -> str:
    """A pandas ``to_csv`` file: the index (row number, or batch size in the energy tables) under an empty header."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["", *header])
    for row in rows:
        writer.writerow([_number(v) for v in row])
    return buffer.getvalue()


def _mib(n: int | None) -> float | None:
    return n / _MIB if n is not None else None


def _train_window(events_text: str | None) -> tuple[int, int] | None:
    steps = steps_of(parse_events(events_text), "train")
    return (steps[0].start_ns, steps[-1].end_ns) if steps else None


def power_maxima(result: TrialResult, series: SeriesLoader) -> dict[str, float | None]:
    """The suite's power columns: the maximum of each rail reading over the training window, where it was sampled."""
    out: dict[str, float | None] = dict.fromkeys(POWER_COLUMNS)
    text = series(result.trial_id, "samples")
    if not text or not any(c in text.partition("\n")[0].split(",") for c in POWER_COLUMNS.values()):
        return out
    window = _train_window(series(result.trial_id, "events"))
    if window is None:
        return out
    samples = parse_samples(text)
    inside = (samples.t_ns >= window[0]) & (samples.t_ns <= window[1])
    for name, column in POWER_COLUMNS.items():
        if column in samples.columns:
            values = samples.columns[column][inside]
            values = values[~np.isnan(values)]
            out[name] = float(values.max()) if len(values) else None
    return out


def energy_value(result: TrialResult, field: str) -> float | None:
    """Energy as the power-sensor code recorded it; per step / per sample divide ``energy_j`` where only it exists.

    Nothing is integrated here: a trial without ``energy_j`` (no power sensor) leaves the cell empty.  Records
    stored before the per-step fields existed read them as null, and get the suite's ``E / steps`` and
    ``E / (steps * batch)``.
    """
    recorded = getattr(result, field)
    if recorded is not None or field == "energy_j":
        return recorded
    energy, steps = result.energy_j, result.step_time_ms.n if result.step_time_ms else 0
    if energy is None or not steps:
        return None
    per_step, per_sample = per_step_and_sample(energy, steps, result.batch_size)
    return per_step if field == "energy_per_step_j" else per_sample


def latest_ok(results: Iterable[TrialResult]) -> dict[tuple[Setting, str, int], TrialResult]:
    """The last ok trial of each (setting, model, batch size); results come in the order they were stored."""
    chosen: dict[tuple[Setting, str, int], TrialResult] = {}
    for r in results:
        if r.ok and r.step_time_ms is not None:
            chosen[(Setting.of(r), r.model, r.batch_size)] = r
    return chosen


def build_files(results: Iterable[TrialResult], device: str, series: SeriesLoader) -> dict[str, str]:
    """Relative path -> file text for every file of the suite's layout (nothing is written yet)."""
    if not _DEVICE.match(device):
        raise UsageError("--device", f"{device!r} must be letters, digits, '.', '_' or '-' (it is part of file names)")
    chosen = latest_ok(results)
    if not chosen:
        raise UsageError("--format mnn-suite", "no successful trial to export; run `edgebench sweep` first")
    names = folder_names(device, (setting for setting, _, _ in chosen))
    files: dict[str, str] = {}
    for setting, folder in names.items():
        trials = {(m, b): r for (s, m, b), r in chosen.items() if s == setting}
        models = sorted({m for m, _ in trials}, key=_net_order)
        for model in models:
            net = suite_net(model)
            by_batch = sorted((b, r) for (m, b), r in trials.items() if m == model)
            time_rows, perf_rows = [], []
            for i, (batch, r) in enumerate(by_batch, start=1):
                time_rows.append(
                    [i, batch, r.step_time_ms.mean, r.infer_time_ms.mean if r.infer_time_ms else None, None]
                )
                power = power_maxima(r, series)
                perf_rows.append(
                    [
                        i,
                        batch,
                        _mib(r.virtual_memory_peak_bytes),
                        _mib(r.peak_memory_bytes),
                        None,
                        r.process_cpu_pct,
                        r.infer_process_cpu_pct,
                        *(power[c] for c in POWER_COLUMNS),
                    ]
                )
            base = f"{folder}/processed_data/{net}"
            files[f"{base}/time_table_{net}.csv"] = _csv(list(TIME_COLUMNS), time_rows)
            files[f"{base}/performance_{net}.csv"] = _csv(list(PERFORMANCE_COLUMNS), perf_rows)
        columns = [*SUITE_NETS.values(), *(suite_net(m) for m in models if m not in SUITE_NETS)]
        batches = sorted({b for _, b in trials})
        for prefix, field in ENERGY_FILES:
            rows = []
            for batch in batches:
                cells = []
                for net in columns:
                    model = next((m for m in models if suite_net(m) == net), None)
                    r = trials.get((model, batch)) if model else None
                    cells.append(energy_value(r, field) if r else None)
                rows.append([batch, *cells])
            files[f"{prefix}_{folder}.csv"] = _csv(columns, rows)
    return files


def _net_order(model: str) -> tuple[int, str]:
    order = list(SUITE_NETS)
    return (order.index(model), model) if model in order else (len(order), model)


def write_mnn_suite(results: Iterable[TrialResult], out_dir: Path, device: str, series: SeriesLoader) -> list[Path]:
    """Build every file first, then write them: a bad input leaves nothing half-written."""
    files = build_files(results, device, series)
    written = []
    for rel, text in sorted(files.items()):
        path = out_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_replacing(path, text)
        written.append(path)
    return written
