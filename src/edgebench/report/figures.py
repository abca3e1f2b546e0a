"""The report's figures as plain data: what to draw, read from stored trials, with no plotting library imported.

Each view is declared once here, as a :class:`Figure` (traces, step boundaries, shaded windows, baselines, notes) or
a :class:`Missing` (a sentence saying what was not measured and why: never an empty chart or a zero).  The HTML
report (:mod:`edgebench.report.html`, Plotly) and ``edgebench plot`` (:mod:`edgebench.report.plot`, matplotlib)
both draw from these records, so the two always show the same numbers.

Long series are thinned for display only (:func:`thin` keeps each bucket's minimum and maximum, so spikes stay
visible) and the figure says so in its notes; the stored data is never altered.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from edgebench.host.cpuset import format_cpu_list, parse_cpu_list
from edgebench.measure.energy import idle_window
from edgebench.records.events import steps_of
from edgebench.records.result import TrialResult
from edgebench.report.sweep_summary import _energy_per_sample_j, best_per_model
from edgebench.sensors.samples import Samples, temperature_column
from edgebench.store.trials import StoredTrial
from edgebench.units import MIB

#: Points per trace beyond which a series is thinned for display.
MAX_POINTS = 1500


@dataclass(frozen=True)
class Trace:
    name: str
    x: Sequence[float] | Sequence[str]
    y: Sequence[float]
    kind: Literal["line", "bar", "hist", "markers"] = "line"
    #: ``y2``: drawn against a second y axis (temperature beside clocks)
    axis: Literal["y", "y2"] = "y"
    #: stacked bars share a group; lines ignore it
    stack: bool = False


@dataclass(frozen=True)
class Span:
    """A shaded stretch of the x axis: the energy window, a throttling episode."""

    x0: float
    x1: float
    label: str
    kind: Literal["window", "idle", "throttle"] = "window"


@dataclass(frozen=True)
class Figure:
    key: str
    title: str
    x_label: str
    y_label: str
    traces: tuple[Trace, ...]
    y2_label: str | None = None
    #: step boundaries (x positions)
    vlines: tuple[float, ...] = ()
    #: horizontal baselines, ``(y, label)``: the idle power
    hlines: tuple[tuple[float, str], ...] = ()
    spans: tuple[Span, ...] = ()
    #: what the reader must know: thinned for display, the best configuration's rule
    notes: tuple[str, ...] = ()
    x_log: bool = False


@dataclass(frozen=True)
class Missing:
    """A view that could not be drawn, and the sentence that says why."""

    key: str
    title: str
    reason: str


View = Figure | Missing


@dataclass
class _Thinned:
    notes: list[str] = field(default_factory=list)


def thin(x: np.ndarray, y: np.ndarray, max_points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``max_points`` points of ``(x, y)`` for display: each bucket's first, minimum and maximum, in order."""
    n = len(x)
    if n <= max_points:
        return x, y
    buckets = max_points // 2
    edges = np.linspace(0, n, buckets + 1).astype(int)
    keep: list[int] = []
    for lo, hi in itertools.pairwise(edges):
        if hi <= lo:
            continue
        chunk = y[lo:hi]
        if np.all(np.isnan(chunk)):
            keep.append(lo)
            continue
        keep.extend(sorted({lo + int(np.nanargmin(chunk)), lo + int(np.nanargmax(chunk))}))
    idx = np.array(keep, dtype=int)
    return x[idx], y[idx]


def _line(name: str, x: np.ndarray, y: np.ndarray, thinned: _Thinned, axis: Literal["y", "y2"] = "y") -> Trace:
    tx, ty = thin(x, y)
    if len(tx) < len(x) and not thinned.notes:
        thinned.notes.append(f"series thinned for display to at most {MAX_POINTS} points each (from {len(x)}); "
                             "minima and maxima kept, the stored data is unchanged")  # fmt: skip
    # rounded for display (µs on the time axis, 5 significant digits): a smaller page, the same picture
    return Trace(name, np.round(tx, 6).tolist(), [None if v != v else float(f"{v:.5g}") for v in ty], axis=axis)


def _origin(stored: StoredTrial) -> int | None:
    """Time zero of a trial's time axes: the first measured step's start (as ``Throttling`` counts its episodes)."""
    steps = steps_of(stored.events, "train") or steps_of(stored.events, "infer")
    if steps:
        return steps[0].start_ns
    return int(stored.samples.t_ns[0]) if stored.samples is not None and len(stored.samples) else None


def _unavailable(samples: Samples | None, *names: str) -> str:
    """The sampler's own reason a sensor was not read, or a general one."""
    if samples is None or samples.meta is None:
        return "the trial was stored without sensor samples"
    reasons = [f"{n}: {samples.meta.unavailable[n]}" for n in names if n in samples.meta.unavailable]
    return "; ".join(reasons) if reasons else "the sampler read no such sensor on this device"


def _label(r: TrialResult) -> str:
    """``lenet b32 [id]``, with the backend and mode where they are not torch and train: a fake or ONNX Runtime
    trial's figure must not read as PyTorch training."""
    unusual = [v for v, usual in ((r.trial.backend, "torch"), (r.trial.mode, "train")) if v != usual]
    return " ".join([r.trial.model, f"b{r.trial.batch_size}", *unusual, f"[{r.trial_id}]"])


# ---- one trial ----------------------------------------------------------------------------------------------------


def step_times(stored: StoredTrial) -> View:
    r = stored.result
    key, title = f"steps-{r.trial_id}", f"Step-time distribution: {_label(r)}"
    steps = steps_of(stored.events, "train") or steps_of(stored.events, "infer")
    if not steps:
        return Missing(key, title, f"no measured step was stored ({r.status}: {r.reason or 'no steps'})")
    ms = [(s.end_ns - s.start_ns) / 1e6 for s in steps]
    notes = ()
    if r.latency.step_ms is not None:
        s = r.latency.step_ms
        notes = (f"mean {s.mean:.3f} ± {s.ci95:.3f} ms (95% CI), median {s.median:.3f}, p95 {s.p95:.3f}, n {s.n}",)
    trace = Trace("steps", list(range(1, len(ms) + 1)), ms, kind="hist")
    return Figure(key, title, "step time (ms)", "steps", (trace,), notes=notes)


def _step_marks(stored: StoredTrial, origin: int, first_steps: int | None) -> tuple[list[float], tuple[int, int]]:
    steps = steps_of(stored.events, "train") or steps_of(stored.events, "infer")
    if first_steps is not None:
        steps = steps[:first_steps]
    marks = sorted({(s.start_ns - origin) / 1e9 for s in steps} | {(s.end_ns - origin) / 1e9 for s in steps})
    window = (steps[0].start_ns, steps[-1].end_ns) if steps else (origin, origin)
    return marks, window


def utilization(stored: StoredTrial, first_steps: int | None = None) -> View:
    """Per-core utilization in each sampling interval (equation 1 per interval) with step boundaries marked.

    ``first_steps=3`` is the characterization paper's figure: utilization over three training steps.
    """
    r = stored.result
    scope = f" over the first {first_steps} steps" if first_steps else ""
    key, title = f"util{first_steps or ''}-{r.trial_id}", f"Per-core CPU utilization{scope}: {_label(r)}"
    s, origin = stored.samples, _origin(stored)
    if s is None or origin is None or not s.matching("cpu", "_active_ticks"):
        return Missing(key, title, f"no per-core CPU time was sampled ({_unavailable(s, 'cpu_time')})")
    marks, window = _step_marks(stored, origin, first_steps)
    rows = np.ones(len(s), dtype=bool) if first_steps is None else (s.t_ns >= window[0]) & (s.t_ns <= window[1])
    t = s.t_ns[rows]
    if len(t) < 2:
        return Missing(key, title, "fewer than two samples fell inside the steps: sample faster (--interval)")
    cores = sorted(r.trial.cores or [int(n[3:].split("_")[0]) for n in s.matching("cpu", "_active_ticks")])
    interval = s.meta.interval_ms if s.meta else float(np.median(np.diff(t)) / 1e6)
    tick_ms = 1e3 / (s.meta.clk_tck if s.meta else 100)
    # Ticks come every 1/USER_HZ (10 ms): an interval that short reads 0 or 100%.  Each point spans at least five
    # ticks, so it resolves 20% steps; equation 1 over that bin, from the same counters.
    every = max(1, int(np.ceil(5 * tick_ms / interval)))
    edges = np.arange(0, len(t), every)
    if len(edges) < 2:
        return Missing(key, title, f"the steps span fewer than {2 * every} sampling intervals, too short to tell "
                                   "utilization from CPU ticks: measure more or longer steps")  # fmt: skip
    thinned, traces = _Thinned(), []
    x = (t[edges[1:]] - origin) / 1e9
    for core in cores:
        if f"cpu{core}_active_ticks" not in s.columns:
            continue
        active = np.diff(s.columns[f"cpu{core}_active_ticks"][rows][edges])
        total = active + np.diff(s.columns[f"cpu{core}_idle_ticks"][rows][edges])
        with np.errstate(invalid="ignore", divide="ignore"):
            pct = np.where(total > 0, 100.0 * active / total, np.nan)
        traces.append(_line(f"cpu{core}", x, pct, thinned))
    traces = [t for t in traces if any(v is not None for v in t.y)]
    if not traces:
        why = "a device tree copied from elsewhere, or a kernel that does not count per-core time"
        return Missing(key, title, f"no CPU tick was counted in any interval: the counters did not advance ({why})")
    binned = f"{every} sampling intervals ({every * interval:g} ms: five or more {tick_ms:g} ms CPU ticks)"
    notes = (f"one point per {binned}; dotted lines: step boundaries", *thinned.notes)
    return Figure(key, title, "time since the first measured step (s)", "utilization (%)", tuple(traces),
                  vlines=tuple(marks) if len(marks) <= 400 else (), notes=notes)  # fmt: skip


def memory(stored: StoredTrial) -> View:
    r = stored.result
    key, title = f"mem-{r.trial_id}", f"Memory over time: {_label(r)}"
    s, origin = stored.samples, _origin(stored)
    wanted = [("proc_rss_bytes", "worker RSS"), ("proc_virt_bytes", "worker VIRT"), ("gpu0_mem_used_bytes", "GPU")]
    present = [(c, n) for c, n in wanted if s is not None and c in s.columns and np.any(~np.isnan(s.columns[c]))]
    if s is None or origin is None or not present:
        return Missing(key, title, f"no process memory was sampled ({_unavailable(s, 'process')})")
    thinned = _Thinned()
    traces = []
    for column, name in present:
        ok = ~np.isnan(s.columns[column])
        traces.append(_line(name, (s.t_ns[ok] - origin) / 1e9, s.columns[column][ok] / MIB, thinned))
    marks, _ = _step_marks(stored, origin, None)
    return Figure(key, title, "time since the first measured step (s)", "MiB", tuple(traces),
                  vlines=tuple(marks) if len(marks) <= 400 else (), notes=tuple(thinned.notes))  # fmt: skip


def power(stored: StoredTrial) -> View:
    """Device power with the idle baseline and the energy window shaded, where a power sensor exists."""
    from edgebench.measure.power import device_power_w

    r = stored.result
    key, title = f"power-{r.trial_id}", f"Power: {_label(r)}"
    s, origin = stored.samples, _origin(stored)
    found = device_power_w(s) if s is not None else None
    if found is None or origin is None:
        sensors = ("rapl", "jetson_power", "power_supply", "nvml")
        return Missing(
            key, title, f"no power sensor on this device, so no power or energy ({_unavailable(s, *sensors)})"
        )
    t, watts, source = found
    thinned = _Thinned()
    traces = (_line(f"device power [{source}]", (t - origin) / 1e9, watts, thinned),)
    _, window = _step_marks(stored, origin, None)
    spans = [Span((window[0] - origin) / 1e9, (window[1] - origin) / 1e9, "energy window (measured steps)")]
    idle = idle_window(stored.events)
    if idle is not None:
        spans.append(Span((idle[0] - origin) / 1e9, (idle[1] - origin) / 1e9, "idle baseline window", "idle"))
    hlines = (
        ((r.energy.idle_power_w, f"idle {r.energy.idle_power_w:.2f} W"),) if r.energy.idle_power_w is not None else ()
    )
    notes = [*thinned.notes]
    if r.energy.energy_j is not None:
        notes.append(f"energy above idle {r.energy.energy_j:.3f} J over {r.energy.window_s or 0:.2f} s")
    return Figure(key, title, "time since the first measured step (s)", "W", traces, hlines=hlines,
                  spans=tuple(spans), notes=tuple(notes))  # fmt: skip


def gpu_utilization(stored: StoredTrial) -> View:
    """Each GPU's utilization as its sensor reports it (NVML's percent, the Jetson's ``load`` per mille / 10), with
    step boundaries: the characterization paper's GPU curves of Figures 3 and 4."""
    r = stored.result
    key, title = f"gpu-{r.trial_id}", f"GPU utilization: {_label(r)}"
    s, origin = stored.samples, _origin(stored)
    columns = {c: v for c, v in (s.columns.items() if s is not None else ())
               if c.startswith("gpu") and c.endswith(("_util_pct", "_load_permille"))}  # fmt: skip
    if s is None or origin is None or not columns:
        return Missing(key, title, f"no GPU utilization was sampled ({_unavailable(s, 'jetson_gpu', 'nvml')})")
    thinned, traces = _Thinned(), []
    for column, values in sorted(columns.items()):
        ok = ~np.isnan(values)
        pct = values[ok] / 10.0 if column.endswith("_load_permille") else values[ok]
        traces.append(_line(column.split("_", 1)[0], (s.t_ns[ok] - origin) / 1e9, pct, thinned))
    marks, _ = _step_marks(stored, origin, None)
    return Figure(key, title, "time since the first measured step (s)", "utilization (%)", tuple(traces),
                  vlines=tuple(marks) if len(marks) <= 400 else (), notes=tuple(thinned.notes))  # fmt: skip


def power_rails(stored: StoredTrial) -> View:
    """Every power channel the device has (the Jetson's CPU, GPU, SoC, DDR and input rails; RAPL's packages), each
    over time: the paper's power by component (Figure 6)."""
    from edgebench.measure.power import power_channels, power_series_w

    r = stored.result
    key, title = f"rails-{r.trial_id}", f"Power by component: {_label(r)}"
    s, origin = stored.samples, _origin(stored)
    channels = power_channels(s) if s is not None else []
    if s is None or origin is None or not channels:
        sensors = ("jetson_power", "rapl", "power_supply", "nvml")
        return Missing(key, title, f"no power rail was sampled ({_unavailable(s, *sensors)})")
    thinned, traces = _Thinned(), []
    for channel in channels:
        t, watts = power_series_w(s, channel)
        traces.append(_line(f"{channel.name} [{channel.source}]", (t - origin) / 1e9, watts, thinned))
    marks, _ = _step_marks(stored, origin, None)
    notes = [*thinned.notes]
    if r.energy.by_rail:
        steps = r.latency.step_ms.n if r.latency.step_ms else 1
        net = r.energy.idle_power_w is not None
        per_step = ", ".join(f"{k} {v.energy_j / steps:.4f}" for k, v in r.energy.by_rail.items())
        gross = ", ".join(f"{k} {v.gross_energy_j / steps:.4f}" for k, v in r.energy.by_rail.items())
        label = "above idle" if net else "gross (no idle baseline)"
        notes.append(f"energy per step by rail, J, {label}: {per_step}")
        if net:
            notes.append(f"energy per step by rail, J, gross: {gross}")
    return Figure(key, title, "time since the first measured step (s)", "W", tuple(traces),
                  vlines=tuple(marks) if len(marks) <= 400 else (), notes=tuple(notes))  # fmt: skip


def clocks(stored: StoredTrial) -> View:
    """CPU clocks and temperatures with throttling episodes shaded (the record's own ``throttling``)."""
    r = stored.result
    key, title = f"clocks-{r.trial_id}", f"Clocks and temperature: {_label(r)}"
    s, origin = stored.samples, _origin(stored)
    if s is None or origin is None:
        return Missing(key, title, _unavailable(s))
    figure = _freq_temp(key, title, s, origin, "time since the first measured step (s)")
    if isinstance(figure, Missing):
        return figure
    spans: list[Span] = []
    notes = list(figure.notes)
    if r.throttling is None:
        notes.append("throttling not assessed for this trial (no clock, temperature or reference clock)")
    elif not r.throttling.episodes:
        notes.append(f"no thermal throttling (clock under 95% of its reference at >= {r.throttling.hot_c:g} °C)")
    for e in r.throttling.episodes if r.throttling else []:
        spans.append(Span(e.start_s, e.start_s + e.duration_s, f"throttled {e.policy}", "throttle"))
    return replace(figure, spans=tuple(spans), notes=tuple(notes))


def _freq_temp(key: str, title: str, s: Samples, origin: int, x_label: str) -> View:
    freq = sorted(s.matching("cpu", "_freq_khz").items(), key=lambda kv: int(kv[0][3:].split("_")[0]))
    temp = temperature_column(list(s.columns))
    temps = [temp] if temp else []
    temps += [c for c in s.matching("temp_", "_mc") if c not in temps][:3]
    if not freq and not temps:
        return Missing(
            key, title, f"no CPU clock or temperature on this device ({_unavailable(s, 'cpu_freq', 'thermal')})"
        )
    thinned, traces = _Thinned(), []
    for column, values in freq:
        ok = ~np.isnan(values)
        traces.append(_line(column.removesuffix("_freq_khz") + " MHz", (s.t_ns[ok] - origin) / 1e9, values[ok] / 1e3,
                            thinned))  # fmt: skip
    for column in temps:
        values = s.columns[column]
        ok = ~np.isnan(values)
        name = s.labels.get(column, column.removeprefix("temp_").removesuffix("_mc")) + " °C"
        traces.append(_line(name, (s.t_ns[ok] - origin) / 1e9, values[ok] / 1e3, thinned, axis="y2" if freq else "y"))
    notes = list(thinned.notes)
    if not freq:
        notes.append(f"no CPU clock ({_unavailable(s, 'cpu_freq')})")
    if not temps:
        notes.append(f"no temperature ({_unavailable(s, 'thermal')})")
    y2 = "°C" if freq and temps else None
    return Figure(key, title, x_label, "MHz" if freq else "°C", tuple(traces), y2_label=y2,
                  notes=tuple(notes))  # fmt: skip


def layers(stored: StoredTrial, top: int = 20) -> View:
    """Forward and backward time of the slowest leaf layers of a traced trial (``edgebench layers``' numbers)."""
    from edgebench.measure.layers import layer_report

    r = stored.result
    key, title = f"layers-{r.trial_id}", f"Per-layer time: {_label(r)}"
    if stored.spans is None:
        return Missing(key, title, f"the trial was not traced (run it with `edgebench run --model {r.trial.model} "
                                   "--trace layers` for a per-layer breakdown)")  # fmt: skip
    report = layer_report(r, stored.spans, stored.events, stored.samples, power=None, peak=None, depth=None)
    names = {row.name for row in report.rows}
    deep = any(row.depth > 0 for row in report.rows)  # the model's own row is not a layer once it has children
    rows = [row for row in report.rows
            if not any(n.startswith(row.name + ".") for n in names) and (row.depth > 0 or not deep)]  # fmt: skip
    rows = sorted(rows, key=lambda row: -(row.forward_ms + (row.backward_ms or 0.0)))[:top]
    if not rows:
        return Missing(key, title, "the trace holds no layer spans")
    names = [row.name for row in rows]
    traces = (
        Trace("forward", names, [row.forward_ms for row in rows], kind="bar", stack=True),
        Trace("backward", names, [row.backward_ms or 0.0 for row in rows], kind="bar", stack=True),
    )
    notes = (f"mean per step over {report.steps} steps; the {len(rows)} slowest of {len(report.rows)} layers",)
    return Figure(key, title, "layer", "ms per step", traces, notes=notes)


def layer_counters(stored: StoredTrial, top: int = 20) -> View | None:
    """``--counters``: each perf event per step of the leaf layers (counts as bars; CPU clocks in ms on the right).
    None for a trial that counted nothing per layer (no view, rather than a sentence on every trial)."""
    from edgebench.host.perf_events import NANOSECOND_EVENTS
    from edgebench.measure.layers import layer_report

    r, spans = stored.result, stored.spans
    if spans is None or spans.counters is None:
        return None
    key, title = f"layer-counters-{r.trial_id}", f"Per-layer perf counters: {_label(r)}"
    report = layer_report(r, spans, stored.events, stored.samples, power=None, peak=None, depth=None)
    names = {row.name for row in report.rows}
    rows = [row for row in report.rows if row.counters and not any(n.startswith(row.name + ".") for n in names)]
    if not rows:
        return Missing(key, title, "no leaf layer span carries counts")
    rows = sorted(rows, key=lambda row: -(row.forward_ms + row.backward_ms))[:top]
    labels = [row.name for row in rows]
    traces = []
    for name in spans.counters:
        ns = name in NANOSECOND_EVENTS
        values = [(row.counters or {}).get(name, float("nan")) / (1e6 if ns else 1.0) for row in rows]
        traces.append(Trace(f"{name} (ms)" if ns else name, labels, values, kind="markers" if ns else "bar",
                            axis="y2" if ns else "y"))  # fmt: skip
    if all(row.cache_miss_pct is not None for row in rows):
        traces.append(Trace("cache miss %", labels, [row.cache_miss_pct or 0.0 for row in rows], kind="markers",
                            axis="y2"))  # fmt: skip
    notes = (f"per step over {report.steps} steps, read at each layer span's two ends (a layer's count includes "
             "the reads); the slowest leaf layers",)  # fmt: skip
    y2 = "ms / %" if any(t.axis == "y2" for t in traces) else None
    return Figure(key, title, "layer", "count per step", tuple(traces), y2_label=y2, notes=notes)


def step_counters(stored: StoredTrial) -> View | None:
    """``--counters`` on a trial without layer spans (a ``--command`` trial): each perf event per measured step
    (counts as bars, CPU clocks in ms on the right).  None where no step carries counts."""
    from edgebench.host.perf_events import NANOSECOND_EVENTS
    from edgebench.records.events import Step

    r = stored.result
    steps = [e for e in stored.events if isinstance(e, Step) and e.counters]
    if not steps:
        return None
    labels = [f"{s.phase} {s.index}" for s in steps]
    traces = []
    for name in steps[0].counters or {}:
        ns = name in NANOSECOND_EVENTS
        values = [(s.counters or {}).get(name, float("nan")) / (1e6 if ns else 1.0) for s in steps]
        traces.append(Trace(f"{name} (ms)" if ns else name, labels, values, kind="markers" if ns else "bar",
                            axis="y2" if ns else "y"))  # fmt: skip
    notes = tuple(n for n in r.measurement_notes or [] if n.startswith("perf counters"))
    y2 = "ms" if any(t.axis == "y2" for t in traces) else None
    return Figure(f"step-counters-{r.trial_id}", f"Per-step perf counters: {_label(r)}", "step", "count per step",
                  tuple(traces), y2_label=y2, notes=notes)  # fmt: skip


def memory_categories(results: Sequence[TrialResult]) -> View:
    """The paper's Figure 9: memory by category per model and batch size, stacked bars in MiB (measured)."""
    from edgebench.records.memory import CATEGORIES

    key, title = "paper-memory-categories-bars", "Characterization paper: memory by category against batch size"
    measured = sorted((r for r in results if r.memory.by_category is not None),
                      key=lambda r: (r.trial.model, r.trial.backend, r.trial.mode, r.trial.batch_size))  # fmt: skip
    if not measured:
        return Missing(key, title, "no trial here measured memory by category (torch and MNN trials now do)")
    labels = [f"{r.trial.model} {r.trial.backend} {r.trial.mode} b={r.trial.batch_size}" for r in measured]
    traces = []
    for field_name, label, _ in CATEGORIES:
        values = [r.memory.by_category.value(field_name) for r in measured]  # type: ignore[union-attr]
        traces.append(Trace(label, labels, [float("nan") if v is None else v / MIB for v in values], kind="bar",
                            stack=True))  # fmt: skip
    other = [r.memory.by_category.other_bytes for r in measured]  # type: ignore[union-attr]
    traces.append(Trace("other (peak less the rest)", labels, [float("nan") if v is None else v / MIB for v in other],
                        kind="bar", stack=True))  # fmt: skip
    notes = ("measured by the worker: distinct tensor storages; runtime = resident memory before the model was "
             "built; the stack's height is the peak (CPU: resident memory)",)  # fmt: skip
    return Figure(key, title, "trial", "MiB", tuple(traces), notes=notes)


def drawable(view: View) -> View:
    """``view``, or a sentence where none of its traces holds a reading: a chart is never drawn empty."""
    if isinstance(view, Figure) and not any(v is not None and v == v for t in view.traces for v in t.y):
        return Missing(view.key, view.title, "the sensor was listed but gave no reading in this window")
    return view


def trial_views(stored: StoredTrial) -> list[View]:
    views = [step_times(stored), utilization(stored), gpu_utilization(stored), memory(stored), power(stored),
             power_rails(stored), clocks(stored), layers(stored)]  # fmt: skip
    counted = layer_counters(stored) if stored.spans is not None else step_counters(stored)
    if stored.result.language_model is not None:
        from edgebench.report.lm_figures import lm_views

        views += lm_views(stored)
    return [drawable(v) for v in (*views, *([counted] if counted is not None else []))]


# ---- a set of trials (a sweep) ------------------------------------------------------------------------------------

#: y quantities of the sweep curves: field -> (axis label, reader)
Y_FIELDS = {
    "step_time_ms": "step time (ms)",
    "throughput_sps": "throughput (samples/s)",
    "energy_per_sample_j": "energy per sample (J)",
    "energy_per_step_j": "energy per step (J)",
    "peak_memory_bytes": "peak memory (MiB)",
    "process_cpu_pct": "worker CPU (% of a core)",
    "cpu_util_pct": "CPU utilization (%, mean over cores)",
    "gpu_util_pct": "GPU utilization (%, mean over GPUs)",
    "core_util_pct": "utilization of each CPU core (%)",
    "rail_energy_per_step_j": "energy per step by rail (J)",
    "tokens_per_s": "tokens per second (language models)",
    "energy_per_token_j": "energy per token (J)",
}
X_FIELDS = {
    "batch_size": "batch size",
    "freq_khz": "CPU frequency (MHz)",
    "threads": "threads",
    "cores": "cores used (cpu list)",
    "seq_len": "sequence length (tokens)",
    "lora_rank": "LoRA rank",
}


def y_value(r: TrialResult, y: str) -> float | None:
    if y in ("rail_energy_per_step_j", "core_util_pct"):  # one value per rail / core: drawn as several curves
        return None
    if y == "step_time_ms":
        return r.latency.step_ms.mean if r.latency.step_ms else None
    if y == "energy_per_sample_j":
        return _energy_per_sample_j(r)
    if y == "energy_per_step_j":
        if r.energy.per_step_j is not None:
            return r.energy.per_step_j
        return r.energy.energy_j / r.latency.step_ms.n if r.energy.energy_j is not None and r.latency.step_ms else None
    if y == "peak_memory_bytes":
        return r.memory.peak_bytes / MIB if r.memory.peak_bytes is not None else None
    if y == "throughput_sps":
        return r.latency.throughput_sps
    if y == "cpu_util_pct":
        return r.cpu.util_pct.mean if r.cpu.util_pct else None
    if y == "gpu_util_pct":
        return r.gpu_util_pct.mean if r.gpu_util_pct else None
    if y in ("tokens_per_s", "energy_per_token_j"):
        return getattr(r.language_model, y) if r.language_model is not None else None
    return r.cpu.process_pct  # process_cpu_pct


def x_value(r: TrialResult, x: str) -> float | str | None:
    """The trial's place on the ``x`` axis: a number, or for ``cores`` its core set (``0``, ``4-7``): two sets of one
    core each are two places, never both "1 core"."""
    if x == "seq_len":  # a language model's (or any one-dimensional input's) length, as it ran
        shape = r.workload.input_shape or list(r.trial.input_shape or ())
        return float(shape[0]) if r.language_model is not None and len(shape) == 1 else None
    if x == "lora_rank":
        rank = r.language_model.setup.lora_rank if r.language_model is not None else None
        return float(rank) if rank is not None else None
    if x == "freq_khz":  # the frequency applied: a policy offers only some
        return r.applied_freq_khz / 1e3 if r.applied_freq_khz else None
    if x == "cores":
        return format_cpu_list(r.trial.cores) if r.trial.cores else None
    value = getattr(r.trial, x)  # a plain number field of the trial, named in X_FIELDS
    return float(value) if value is not None else None


def x_order(value: float | str) -> tuple[float, ...]:
    """Where an x value sorts: a number by itself; a core set by its size, then its cores."""
    if isinstance(value, str):
        cores = parse_cpu_list(value)
        return (float(len(cores)), *map(float, cores))
    return (value,)


def _points_in_order(points: list[tuple[float | str, float]]) -> tuple[list[float | str], list[float]]:
    ordered = sorted(points, key=lambda p: x_order(p[0]))
    return [p[0] for p in ordered], [p[1] for p in ordered]


_OTHER_AXES = ("batch_size", "threads", "cores", "freq_khz", "precision", "backend", "mode")
#: A language model's settings that make another curve (``seq_len`` and ``lora_rank`` are axes as well).
_LM_AXES = ("seq_len", "lora_rank", "finetune", "frozen_weights", "checkpointing")


def _series_key(r: TrialResult, x: str) -> str:
    """The curve a trial belongs to: its model and every varying setting but the x axis (a core set by its cores,
    a frequency as applied), so trials that differ in any setting never share a line."""
    parts = [r.trial.model]
    for name in _OTHER_AXES:
        if name == x:
            continue
        value = getattr(r.trial, name)
        if name == "cores" and value:
            value = format_cpu_list(value)
        elif name == "freq_khz" and value:
            value = r.applied_freq_khz
        parts.append(f"{name}={value}")
    if r.language_model is not None:
        for name in _LM_AXES:
            if name != x:
                value = x_value(r, name) if name in X_FIELDS else getattr(r.trial, name)
                parts.append(f"{name}={value if not isinstance(value, float) else f'{value:g}'}")
    return " ".join(parts)


def sweep_curve(results: Sequence[TrialResult], y: str, x: str = "batch_size", key: str | None = None) -> View:
    """``y`` against ``x``, one curve per model (and per other setting that varies), the best per model marked."""
    title = f"{Y_FIELDS[y][0].upper()}{Y_FIELDS[y][1:]} against {X_FIELDS[x]}"
    key = key or f"sweep-{y}-{x}"
    ok = [r for r in results if r.ok]
    if y == "rail_energy_per_step_j":
        return _rail_curves(ok, x, key, title)
    if y == "core_util_pct":
        return _core_curves(ok, x, key, title)
    points = [(r, x_value(r, x), y_value(r, y)) for r in ok]
    points = [(r, px, py) for r, px, py in points if px is not None and py is not None]
    if not points:
        if y.startswith("energy") and ok:
            estimate = "`edgebench run --estimate-energy` records a labelled estimate instead"
            return Missing(key, title, f"no trial has measured energy: the device has no power sensor ({estimate})")
        what = "frequency" if x == "freq_khz" else X_FIELDS[x]
        return Missing(key, title, f"no successful trial has both {Y_FIELDS[y]} and a {what}")
    groups: dict[str, list[tuple[float | str, float]]] = {}
    for r, px, py in points:
        groups.setdefault(_series_key(r, x), []).append((px, py))
    varying = {k: len(v) for k, v in groups.items()}
    labels = _short_labels(list(groups))
    traces = []
    for name, pts in groups.items():
        xs, ys = _points_in_order(pts)
        traces.append(Trace(labels[name], xs, ys, kind="line" if varying[name] > 1 else "markers"))
    best = best_per_model(list(results), "latency-first")
    best_pts = [(p.result, x_value(p.result, x), y_value(p.result, y)) for p in best.values() if p.clear]
    best_pts = [(r, px, py) for r, px, py in best_pts if px is not None and py is not None]
    if best_pts:
        traces.append(Trace("best per model", [p[1] for p in best_pts], [p[2] for p in best_pts], kind="markers"))
    unit = "token" if any(r.language_model is not None for r, _, _ in points) else "sample"
    notes = (
        f"best per model: lowest time per {unit} (latency-first), the sweep's own rule, marked only where it is "
        "clear across repeats (--repeats)",
    )
    return Figure(key, title, X_FIELDS[x], Y_FIELDS[y], tuple(traces), notes=notes)


def _rail_curves(ok: Sequence[TrialResult], x: str, key: str, title: str) -> View:
    """Energy per step of each power rail (the paper's energy by component) against ``x``: one curve per rail and
    per model (and other varying setting); above idle where an idle baseline was measured, as ``energy_j``."""
    groups: dict[str, list[tuple[float | str, float]]] = {}
    net = False
    for r in ok:
        px, steps = x_value(r, x), r.latency.step_ms.n if r.latency.step_ms else 0
        if px is None or not steps or not r.energy.by_rail:
            continue
        net = net or r.energy.idle_power_w is not None
        for rail, e in r.energy.by_rail.items():
            groups.setdefault(f"{_series_key(r, x)} {rail}", []).append((px, e.energy_j / steps))
    if not groups:
        return Missing(key, title, "no trial has energy by rail: the device has no per-rail power sensor")
    labels = _short_labels(list(groups))
    traces = tuple(Trace(labels[k], *_points_in_order(v), kind="line" if len(v) > 1 else "markers")
                   for k, v in groups.items())  # fmt: skip
    note = "above idle (the rail's idle power subtracted)" if net else "gross: no idle baseline was measured"
    return Figure(key, title, X_FIELDS[x], Y_FIELDS["rail_energy_per_step_j"], traces, notes=(note,))


def _core_curves(ok: Sequence[TrialResult], x: str, key: str, title: str) -> View:
    """Each CPU core's mean utilization against ``x`` (the paper's Figure 5: cores of one SoC change differently
    with the batch size): one curve per core and per model (and other varying setting); an offline core has none."""
    groups: dict[str, list[tuple[float | str, float]]] = {}
    for r in ok:
        px = x_value(r, x)
        if px is None or r.cpu.util_pct is None:
            continue
        for core, pct in enumerate(r.cpu.util_pct.per_core):
            if pct is not None:
                groups.setdefault(f"{_series_key(r, x)} cpu{core}", []).append((px, pct))
    if not groups:
        return Missing(key, title, f"no successful trial has per-core CPU utilization and a {X_FIELDS[x]}")
    labels = _short_labels(list(groups))
    traces = tuple(Trace(labels[k], *_points_in_order(v), kind="line" if len(v) > 1 else "markers")
                   for k, v in groups.items())  # fmt: skip
    note = "each core's busy share over the measured steps (all processes on it, not only the worker)"
    return Figure(key, title, X_FIELDS[x], Y_FIELDS["core_util_pct"], traces, notes=(note,))


def _short_labels(keys: list[str]) -> dict[str, str]:
    """Curve names without the settings every curve shares."""
    split = [k.split(" ") for k in keys]
    common = set(split[0][1:]).intersection(*(set(s[1:]) for s in split)) if split else set()
    return {k: " ".join([s[0], *(p for p in s[1:] if p not in common)]) for k, s in zip(keys, split, strict=True)}


def varying_axes(results: Sequence[TrialResult]) -> list[str]:
    """The x axes along which the trials differ (batch size first), for the sweep's curves."""
    return [x for x in X_FIELDS if len({x_value(r, x) for r in results if r.ok} - {None}) > 1]


def sweep_views(results: Sequence[TrialResult]) -> list[View]:
    axes = varying_axes(results) or ["batch_size"]
    ys: tuple[str, ...] = ("step_time_ms", "throughput_sps", "energy_per_sample_j")
    if any(r.language_model is not None for r in results):  # tokens, memory and energy per token, as issue 41 asks
        ys = ("tokens_per_s", "peak_memory_bytes", "step_time_ms", "energy_per_token_j")
    return [sweep_curve(results, y, x) for x in axes for y in ys]


# ---- a monitor recording ------------------------------------------------------------------------------------------


def monitor_freq_temp(samples: Samples, name: str) -> View:
    """The MNN-based suite's frequency/temperature trace, from an ``edgebench monitor`` folder."""
    key, title = "monitor-freq-temp", f"Frequency and temperature: {name}"
    if not len(samples):
        return Missing(key, title, "the recording holds no samples")
    return _freq_temp(key, title, samples, int(samples.t_ns[0]), "time since the recording began (s)")
