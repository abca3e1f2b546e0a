"""The MNN-based suite's result files, written from stored trials, so its users' scripts and plots keep working.

Layout, names, columns, meanings and formatting are the suite's own (what its ``dataprocess.py``,
``energy_compute.py`` and ``temperature.py`` write and read; REFERENCE.md sections 1 and 9)::

    OUT/<Folder>/processed_data/<Net>/time_table_<Net>.csv      ,batchsize,expr_train,expr_infer,session_infer
    OUT/<Folder>/processed_data/<Net>/performance_<Net>.csv     ,batchsize,VIRT,RES,SHR,cpuUsage_train,...
    OUT/<Folder>/processed_data/<Net>/processed_data_<Net>.csv  ,stamp,processPid,VIRT,RES,SHR,cpuUsage,...
    OUT/<Folder>/train_stamp/<Net>/train_stamp_<bs>.result      Begin training : <ms> ... End inferring : <ms>
    OUT/<Folder>/usage_monitor/usage_monitor_<Net>.result, train_bench/train_bench_<Net>.result, bench_session.result
    OUT/batchsize_energy_<Folder>.csv, singleBatch_energy_<Folder>.csv, singleSample_energy_<Folder>.csv
    OUT/freq_temperature.result, OUT/freq_temperature.csv

``<Folder>`` is ``<Device>_Core_<mask>`` for a trial given ``--cores`` (the mask as the user typed it),
``<Device>_Freq_<kHz>`` for a pinned frequency, or ``<Device>`` for a trial that controlled neither: the suite
writes ``_Core_<mask>`` only where it applied the mask with ``taskset``, and ``<Device>`` on its unrooted phones,
where placement was left to the device (:func:`placed`).  Where two groups of
trials would share a folder name (two thread counts on one mask, say), the name gains what tells them apart
(``_Threads_2``, ``_Core_f0``, ``_bf16``).  The power columns are written where the folder's trials sampled a
power rail, as the suite writes them only in its rooted layout.

``batchsize_energy`` is the suite's quantity: the energy above the idle baseline over the whole training run (warm-up
and measured steps), in J; ``singleBatch`` divides it by the run's batches, ``singleSample`` by batches x batch size.
A value not measured is ``nan`` - never a made-up number.  When a configuration was measured more than once, the
latest trial is the one written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.errors import UsageError
from edgebench.formats.mnn_suite.series import (
    BENCH_SESSION_TEXT,
    RAIL_COLUMNS,
    FreqRow,
    TrialSeries,
    freq_rows,
    freq_temperature_csv,
    freq_temperature_result,
    load_series,
    nan_or,
    processed_data_csv,
    run_energy_j,
    sample_rows,
    train_bench_text,
    usage_monitor_text,
)
from edgebench.host.cpuset import format_mask, parse_cpu_list
from edgebench.host.files import file_name, inside, write_text_replacing
from edgebench.measure.energy import per_step_and_sample
from edgebench.records.result import TrialResult
from edgebench.units import MIB

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
POWER_COLUMNS = tuple(RAIL_COLUMNS)
ENERGY_FILES = ("batchsize_energy", "singleBatch_energy", "singleSample_energy")
_DEVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

SeriesLoader = Callable[[str, str], str | None]


def suite_net(model: str) -> str:
    """The suite's name of the network: its own for the five it trains, else the model's name made a safe file
    name (a label is data: ``x:/../../OUTSIDE`` must not lead the files it names out of ``--out``)."""
    return SUITE_NETS.get(model) or file_name(model)


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
            mask=(r.trial.cores_mask or format_mask(r.trial.cores)) if placed(r) and r.trial.cores else "all",
            freq_khz=r.applied_freq_khz or 0,  # the suite's folders name the frequency its runs were pinned to
            threads=r.trial.threads or 0,
            precision=r.trial.precision,
            backend=r.trial.backend,
            device=r.trial.device,
        )


def placed(r: TrialResult) -> bool:
    """Whether the trial's core set was asked for (the suite's ``taskset`` with a mask, its ``_Core_<mask>``
    folders) rather than left to the device (its unrooted phones, the ``<Device>`` folder).

    A mask typed on the command line is always asked.  Otherwise the trial's cores were resolved to the device's
    allowed set when none were given, so cores equal to the allowed set recorded with the result mean no placement
    was controlled; a list naming every allowed core constrained nothing either and reads the same.  Where the
    device recorded no allowed set (a trial on a fixture tree), its online cores stand in; with neither, a trial
    with cores counts as placed (its mask is all that can be said)."""
    if r.trial.cores_mask:
        return True
    if not r.trial.cores:
        return False
    allowed = r.device.cores_allowed or r.device.cores_online
    if not allowed:
        return True
    try:
        return parse_cpu_list(allowed) != r.trial.cores
    except ValueError:
        return True


def folder_names(device: str, settings: Iterable[Setting]) -> dict[Setting, str]:
    """``<Device>_Core_<mask>``, ``<Device>_Freq_<kHz>`` or ``<Device>``, plus what tells apart colliding settings."""
    groups: dict[str, list[Setting]] = {}
    for s in sorted(set(settings)):
        base = f"{device}_Freq_{s.freq_khz}" if s.freq_khz else f"{device}_Core_{s.mask}"
        if not s.freq_khz and s.mask == "all":
            base = device  # the suite's unrooted layout: no core or frequency control
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
            names[s] = file_name(name)  # the mask and the device are data too
    return names


def _csv(header: list[str], rows: list[list[Any]]) -> str:
    """A pandas ``to_csv`` file: the index (row number, or batch size in the energy tables) under an empty header;
    ``nan`` for a value not measured, whole numbers without ``.0`` (as the suite's files hold them)."""
    lines = [",".join(["", *header])]
    lines += [",".join(cell if isinstance(cell, str) else nan_or(cell) for cell in row) for row in rows]
    return "\n".join(lines) + "\n"


def _mib(n: int | float | None) -> float | None:
    return n / MIB if n is not None else None


def _ms6(stats: Any) -> str:
    """A latency as the suite's benchmark prints it and its ``time_table`` keeps it: ``%f``, six decimals."""
    return f"{stats.mean:.6f}" if stats is not None else "nan"


def _window_max(ts: TrialSeries, column: str) -> float | None:
    """The largest reading of a sampler column over the training run, where it was sampled."""
    s = ts.samples
    if s is None or ts.train_ns is None or column not in s.columns:
        return None
    inside = (s.t_ns >= ts.train_ns[0]) & (s.t_ns <= ts.train_ns[1])
    values = s.columns[column][inside]
    values = values[~np.isnan(values)]
    return float(values.max()) if len(values) else None


def energy_figures(ts: TrialSeries) -> dict[str, float | None]:
    """``batchsize_energy`` (the whole training run, J), ``singleBatch`` (/ its batches), ``singleSample``."""
    r = ts.result
    if r.imported_from is not None:
        return {
            "batchsize_energy": r.energy.energy_j,
            "singleBatch_energy": r.energy.per_step_j,
            "singleSample_energy": r.energy.per_sample_j,
        }
    energy = run_energy_j(ts)
    batches = ts.windows.train_batches
    if energy is None or not batches:
        return dict.fromkeys(("batchsize_energy", "singleBatch_energy", "singleSample_energy"), energy)
    per_batch, per_sample = per_step_and_sample(energy, batches, r.trial.batch_size)
    return {"batchsize_energy": energy, "singleBatch_energy": per_batch, "singleSample_energy": per_sample}


def latest_ok(results: Iterable[TrialResult]) -> dict[tuple[Setting, str, int], TrialResult]:
    """The last ok trial of each (setting, model, batch size); results come in the order they were stored."""
    chosen: dict[tuple[Setting, str, int], TrialResult] = {}
    for r in results:
        if r.ok and r.latency.step_ms is not None:
            chosen[(Setting.of(r), r.trial.model, r.trial.batch_size)] = r
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
    loaded = {key: load_series(r, series) for key, r in chosen.items()}
    freq: list[FreqRow] = []
    for setting, folder in names.items():
        trials = {(m, b): loaded[(s, m, b)] for (s, m, b) in chosen if s == setting}
        with_power = any(ts.has_rails for ts in trials.values())
        models = sorted({m for m, _ in trials}, key=_net_order)
        for model in models:
            net = suite_net(model)
            by_batch = sorted(((b, ts) for (m, b), ts in trials.items() if m == model), key=lambda x: x[0])
            time_rows, perf_rows, rows = [], [], []
            for i, (batch, ts) in enumerate(by_batch, start=1):
                r = ts.result
                # only an imported trial has one; MNN's session benchmark prints three decimals
                session = r.device.extra.get("mnn_suite_session_infer_ms")
                session_cell = f"{session:.3f}" if session is not None else "nan"
                time_rows.append([i, batch, _ms6(r.latency.step_ms), _ms6(r.latency.infer_ms), session_cell])
                power = [_window_max(ts, RAIL_COLUMNS[c]) for c in POWER_COLUMNS]
                shr = _mib(_window_max(ts, "proc_shr_bytes"))
                perf = [i, batch, _mib(r.memory.virtual_peak_bytes), _mib(r.memory.peak_bytes), shr]
                perf += [r.cpu.process_pct, r.cpu.infer_process_pct]
                perf_rows.append(perf + (power if with_power else []))
                rows += sample_rows(ts)
                if ts.windows.train or ts.windows.infer:
                    files[f"{folder}/train_stamp/{net}/train_stamp_{batch}.result"] = ts.stamp_text()
            rows.sort(key=lambda row: row.stamp_ms)
            base = f"{folder}/processed_data/{net}"
            perf_header = [*PERFORMANCE_COLUMNS[:6], *(PERFORMANCE_COLUMNS[6:] if with_power else ())]
            files[f"{base}/time_table_{net}.csv"] = _csv(list(TIME_COLUMNS), time_rows)
            files[f"{base}/performance_{net}.csv"] = _csv(perf_header, perf_rows)
            if rows:
                files[f"{base}/processed_data_{net}.csv"] = processed_data_csv(rows, with_power)
                files[f"{folder}/usage_monitor/usage_monitor_{net}.result"] = usage_monitor_text(rows, with_power)
            files[f"{folder}/train_bench/train_bench_{net}.result"] = train_bench_text(
                net, [(b, ts.result) for b, ts in by_batch]
            )
        files[f"{folder}/bench_session.result"] = BENCH_SESSION_TEXT
        columns = [*SUITE_NETS.values(), *(suite_net(m) for m in models if m not in SUITE_NETS)]
        batches = sorted({b for _, b in trials})
        figures = {key: energy_figures(ts) for key, ts in trials.items()}
        for prefix in ENERGY_FILES:
            rows_out: list[list[Any]] = []
            for batch in batches:
                cells: list[Any] = [batch]
                for net in columns:
                    model = next((m for m in models if suite_net(m) == net), None)
                    got = figures.get((model, batch)) if model else None
                    cells.append(got[prefix] if got else None)
                rows_out.append(cells)
            files[f"{prefix}_{folder}.csv"] = _csv(columns, rows_out)
        for ts in trials.values():
            freq += freq_rows(ts)
    if freq:
        freq.sort(key=lambda row: row.stamp_ms)
        files["freq_temperature.result"] = freq_temperature_result(freq)
        files["freq_temperature.csv"] = freq_temperature_csv(freq)
    return files


def _net_order(model: str) -> tuple[int, str]:
    order = list(SUITE_NETS)
    return (order.index(model), model) if model in order else (len(order), model)


def write_mnn_suite(results: Iterable[TrialResult], out_dir: Path, device: str, series: SeriesLoader) -> list[Path]:
    """Build every file first, then write them: a bad input leaves nothing half-written."""
    files = build_files(results, device, series)
    written = []
    for rel, text in sorted(files.items()):
        path = inside(out_dir, rel)  # every name above is made safe; this holds the line should one not be
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_replacing(path, text)
        written.append(path)
    return written
