"""A stored trial as Chrome trace-event JSON that the Perfetto UI (and chrome://tracing) opens.

Layout: the worker is one process; its main thread carries a slice per step (warm-up, train, inference) and,
for a traced trial, the layer (or op) spans nested inside the train steps.  The sampled device figures are
counter tracks on a second process, "device": per-core utilization, per-core frequency, each temperature
sensor, each power rail (or a given power series) and available memory; the worker process also carries its
own resident memory.

Format choices that keep Perfetto's JSON importer happy:

- Complete events (``"ph": "X"``) with ``ts`` and ``dur`` in whole microseconds, relative to the trial's first
  event.  Both ends of every slice are floored from nanoseconds independently, so a child that ends with its
  parent still ends inside it after rounding (fractional microseconds can break nesting by a nanosecond).
- One value per counter event: the importer names a track ``"<name> <arg key>"`` and multi-value counter
  events split or break, so every counter has its own name and a single key that says its unit.
- ``process_name`` / ``thread_name`` metadata for every process and thread used.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from edgebench.host.perf_events import NANOSECOND_EVENTS
from edgebench.measure.attribution import PowerSeries
from edgebench.measure.power import power_channels, power_series_w
from edgebench.records.events import EventsLike, Ready, Step, as_events, first
from edgebench.records.result import TrialResult
from edgebench.records.spans import BACKWARD, KINDS, SpanTable
from edgebench.sensors.samples import Samples
from edgebench.units import MIB

#: Pseudo process id of the device's counter tracks (above Linux's pid_max, so it never names a real process).
DEVICE_PID = 4_194_305


def _us(t_ns: int, t0_ns: int) -> int:
    return (int(t_ns) - t0_ns) // 1000


def _slice(
    name: str, cat: str, start_ns: int, end_ns: int, t0: int, pid: int, tid: int, args: dict[str, Any]
) -> dict[str, Any]:
    ts = _us(start_ns, t0)
    return {"ph": "X", "name": name, "cat": cat, "ts": ts, "dur": max(_us(end_ns, t0) - ts, 0), "pid": pid,
            "tid": tid, "args": args}  # fmt: skip


def _counter(name: str, unit: str, t_ns: np.ndarray, values: np.ndarray, t0: int, pid: int) -> list[dict[str, Any]]:
    """One counter event per finite value (a missing reading leaves the previous value standing)."""
    return [
        {"ph": "C", "name": name, "ts": _us(t, t0), "pid": pid, "tid": pid, "args": {unit: round(float(v), 6)}}
        for t, v in zip(t_ns.tolist(), values.tolist(), strict=True)
        if math.isfinite(v)
    ]


def _rate(t_ns: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ratio of the growth of two cumulative counters between successive readings where the denominator grew.

    Readings where it did not grow (no tick in a 10 ms interval) are merged into the next one, so every stretch
    of time gets the ratio measured over it, stamped at its start.
    """
    ok = ~np.isnan(numerator) & ~np.isnan(denominator)
    t, num, den = t_ns[ok], numerator[ok], denominator[ok]
    out_t: list[int] = []
    out_v: list[float] = []
    last = 0
    for k in range(1, len(t)):
        if den[k] > den[last]:
            out_t.append(int(t[last]))
            out_v.append(100.0 * (num[k] - num[last]) / (den[k] - den[last]))
            last = k
    return np.asarray(out_t, dtype=np.int64), np.asarray(out_v, dtype=np.float64)


def _core_id(column: str) -> int:
    return int(column[3:].split("_")[0])


def sample_counters(samples: Samples, t0: int, worker_pid: int, power: PowerSeries | None) -> list[dict[str, Any]]:
    """Counter events for every sampled device figure this trial has."""
    out: list[dict[str, Any]] = []
    t = samples.t_ns
    for column in samples.matching("cpu", "_active_ticks"):
        core = _core_id(column)
        active = samples.columns[column]
        total = active + samples.columns[f"cpu{core}_idle_ticks"]
        rate_t, rate_v = _rate(t, active, total)
        out += _counter(f"cpu{core} utilization", "pct", rate_t, rate_v, t0, DEVICE_PID)
    for column, values in samples.matching("cpu", "_freq_khz").items():
        out += _counter(f"cpu{_core_id(column)} frequency", "MHz", t, values / 1e3, t0, DEVICE_PID)
    for column, values in samples.matching("temp_", "_mc").items():
        label = samples.labels.get(column, column.removeprefix("temp_").removesuffix("_mc"))
        out += _counter(f"temperature {label}", "C", t, values / 1e3, t0, DEVICE_PID)
    for column, values in samples.columns.items():
        if column.startswith("gpu") and column.endswith(("_util_pct", "_load_permille")):
            pct = values / 10.0 if column.endswith("_load_permille") else values
            out += _counter(f"{column.split('_', 1)[0]} utilization", "pct", t, pct, t0, DEVICE_PID)
    shown = set()
    for channel in power_channels(samples):
        rail_t, rail_w = power_series_w(samples, channel)
        out += _counter(f"power {channel.name}", "W", rail_t, rail_w, t0, DEVICE_PID)
        shown.add(f"{channel.source}: {channel.name}")
    if power is not None and power.source not in shown:
        out += _counter(f"power {power.source}", "W", power.t_ns, power.watts, t0, DEVICE_PID)
    if "mem_available_bytes" in samples.columns:
        out += _counter("memory available", "MiB", t, samples.columns["mem_available_bytes"] / MIB, t0, DEVICE_PID)
    if "proc_rss_bytes" in samples.columns:
        out += _counter("worker resident memory", "MiB", t, samples.columns["proc_rss_bytes"] / MIB, t0, worker_pid)
    return out


def step_counter_tracks(steps: list[Step], t0: int, pid: int) -> list[dict[str, Any]]:
    """``--counters``: one track per perf event on the worker, each step's count standing over that step."""
    counted = [s for s in steps if s.counters]
    out: list[dict[str, Any]] = []
    names = list(counted[0].counters or {}) if counted else []
    for name in names:
        ns = name in NANOSECOND_EVENTS
        t = np.asarray([s.start_ns for s in counted], dtype=np.int64)
        v = np.asarray([(s.counters or {}).get(name, np.nan) for s in counted], dtype=np.float64)
        out += _counter(f"perf {name} per step", "ms" if ns else "count", t, v / 1e6 if ns else v, t0, pid)
    return out


def chrome_trace(
    result: TrialResult,
    events: EventsLike,
    samples: Samples | None = None,
    spans: SpanTable | None = None,
    power: PowerSeries | None = None,
) -> dict[str, Any]:
    """The trace-event document (``{"traceEvents": [...], ...}``) for one trial."""
    events = as_events(events)
    steps = [e for e in events if isinstance(e, Step)]
    ready = first(events, Ready)
    pid = ready.pid if ready and ready.pid else 1
    starts = [s.start_ns for s in steps]
    if spans is not None and len(spans):
        starts.append(int(spans.start_ns.min()))
    if samples is not None and len(samples):
        starts.append(int(samples.t_ns[0]))
    if power is not None and len(power.t_ns):
        starts.append(int(power.t_ns[0]))
    t0 = min(starts) if starts else 0
    main_tid = pid  # the worker's main thread has the process id on Linux
    threads: dict[int, str] = {main_tid: "worker main thread"}
    trace: list[dict[str, Any]] = []
    for step in steps:
        args = {"phase": step.phase, "index": step.index, "ms": (step.end_ns - step.start_ns) / 1e6}
        if step.loss is not None:
            args["loss"] = step.loss
        if step.counters:
            args["perf"] = step.counters
        trace.append(_slice(f"{step.phase} step {step.index}", "step", step.start_ns, step.end_ns, t0, pid, main_tid,
                            args))  # fmt: skip
    if spans is not None:
        span_main = max(set(spans.tid.tolist()), key=spans.tid.tolist().count) if len(spans) else main_tid
        for t, name in spans.thread_names.items():
            if t != span_main:
                threads[t] = name
        counts = {n: v.tolist() for n, v in (spans.counters or {}).items()}
        for i, (label, kind, start, end, tid) in enumerate(zip(
            spans.label.tolist(), spans.kind.tolist(), spans.start_ns.tolist(), spans.end_ns.tolist(),
            spans.tid.tolist(), strict=True,
        )):  # fmt: skip
            name = spans.names[label]
            if spans.granularity == "layers" and kind == BACKWARD:
                name += " (backward)"
            args: dict[str, Any] = {"type": spans.types[label], "kind": KINDS[kind]}
            if counts:
                args["perf"] = {n: v[i] for n, v in counts.items()}
            trace.append(_slice(name, KINDS[kind], start, end, t0, pid, main_tid if tid == span_main else tid,
                                args))  # fmt: skip
    trace += step_counter_tracks(steps, t0, pid)
    if samples is not None:
        trace += sample_counters(samples, t0, pid, power)
    elif power is not None:
        trace += _counter(f"power {power.source}", "W", power.t_ns, power.watts, t0, DEVICE_PID)
    where = f"batch {result.trial.batch_size}, {result.trial.threads} threads"
    meta = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": main_tid,
         "args": {"name": f"edgebench worker: {result.trial.model} ({where}) [{result.trial_id}]"}},
        {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": main_tid, "args": {"sort_index": 0}},
    ]  # fmt: skip
    meta += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": t, "args": {"name": n}} for t, n in threads.items()]
    if any(e["ph"] == "C" and e["pid"] == DEVICE_PID for e in trace):
        interval = f" every {result.sampler.interval_ms:g} ms" if result.sampler else ""
        meta += [
            {"ph": "M", "name": "process_name", "pid": DEVICE_PID, "tid": DEVICE_PID,
             "args": {"name": f"device ({result.device.hostname or '?'}, sampled{interval})"}},
            {"ph": "M", "name": "thread_name", "pid": DEVICE_PID, "tid": DEVICE_PID, "args": {"name": "sensors"}},
            {"ph": "M", "name": "process_sort_index", "pid": DEVICE_PID, "tid": DEVICE_PID, "args": {"sort_index": 1}},
        ]  # fmt: skip
    return {
        "traceEvents": meta + trace,
        "displayTimeUnit": "ms",
        "otherData": {
            "trial_id": result.trial_id,
            "model": result.trial.model,
            "batch_size": result.trial.batch_size,
            "granularity": spans.granularity if spans is not None else None,
            "clock": "CLOCK_MONOTONIC, ts = microseconds since the trial's first event",
            "t0_monotonic_ns": t0,
        },
    }
