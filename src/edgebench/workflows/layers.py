"""Looking inside a stored trial: its per-layer table (forward/backward time, share of the step, CPU, energy,
FLOPs, roofline against the device's measured peak), rebuilt from its stored series; and its Chrome trace (steps,
layer and op spans, sampled counters), checked before it is written and, where Perfetto's trace processor is
installed, loaded by it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgebench.errors import UsageError
from edgebench.workflows.common import Notify, quiet

if TYPE_CHECKING:
    from edgebench.measure.layers import LayerReport
    from edgebench.records.result import TrialResult
    from edgebench.report.trace_check import PerfettoCheck


@dataclass(frozen=True)
class LayersRequest:
    """The trial (an id or a unique prefix), the depth modules fold into (None: every module), the power channel
    attributed (None: the device total), and whether the device's peak may (or must) be measured now."""

    trial: str
    depth: int | None = None
    power_channel: str | None = None
    refresh_peak: bool = False
    no_measure: bool = False
    store: Path | None = None


@dataclass(frozen=True)
class StepCounters:
    """A trial without layer spans that counted perf events (a ``--command`` trial: one process tree): its steps'
    counts and the whole run's."""

    result: TrialResult
    rows: list[dict[str, Any]]

    @property
    def run(self) -> dict[str, Any] | None:
        return self.result.cpu.perf_counters_run


@dataclass(frozen=True)
class TraceRequest:
    """The trial, where its trace goes (None: ``TRIAL.trace.json`` here; ``-``: handed back as text), whether to
    check it in Perfetto's trace processor (which one), and the power channel of the extra power track."""

    trial: str
    output: Path | None = None
    check: bool = False
    trace_processor: str | None = None
    power_channel: str | None = None
    store: Path | None = None


@dataclass(frozen=True)
class TraceWritten:
    """The trace: where it was written (``text`` instead for ``-``), its slices, counter values and events; the
    structural problems that kept it from being written; Perfetto's verdict (None: not asked, or not installed)."""

    trial_id: str
    path: Path | None
    text: str | None
    slices: int
    counters: int
    events: int
    problems: list[str] = field(default_factory=list)
    perfetto: PerfettoCheck | None = None
    checker: str | None = None


def layer_table(request: LayersRequest, *, notify: Notify = quiet) -> LayerReport | StepCounters:
    """The trial's per-layer report (with the device's peak for the roofline: stored, or measured now on this
    device unless ``no_measure``), or the step counters of a trial that has no layer spans."""
    from edgebench.measure.layers import layer_report
    from edgebench.store.trials import load_trial, power_series

    if request.depth is not None and request.depth < 0:
        raise UsageError("--depth", "must be 0 or more (0 = the whole model, 1 = its children, ...)")
    stored = load_trial(request.store, request.trial)
    result = stored.result
    if stored.spans is None and (result.cpu.perf_counters_run or result.cpu.perf_counters_per_step):
        from edgebench.records.events import Step
        from edgebench.report.layers import step_counter_rows

        return StepCounters(result, step_counter_rows([e for e in stored.events if isinstance(e, Step)]))
    if stored.spans is None:
        raise UsageError(
            "TRIAL",
            f"trial {result.trial_id} has no spans ({result.status}); record them with "
            f"`edgebench run --model {result.trial.model} --trace layers`",
        )
    deepest = max(stored.spans.depth, default=0)
    if request.depth is not None and request.depth > deepest:
        raise UsageError(
            "--depth",
            f"{request.depth} is deeper than this trial's model, whose deepest module is at depth {deepest}; "
            f"give 0 to {deepest}, or leave it out for every module",
        )
    power = power_series(stored, request.power_channel)
    peak = _peak(request, result, notify) if stored.spans.costs is not None else None
    return layer_report(result, stored.spans, stored.events, stored.samples, power=power, peak=peak,
                        depth=request.depth)  # fmt: skip


def _peak(request: LayersRequest, result: TrialResult, notify: Notify) -> dict[str, Any] | None:
    from edgebench.store import Store
    from edgebench.store.sqlite import StoreUnusable
    from edgebench.workflows.peak import peak_for_trial

    no_measure = request.no_measure
    try:
        db = Store(request.store)
    except StoreUnusable:  # read-only: show the stored peak, measure none (it could not be kept)
        db, no_measure = Store(request.store, read_only=True), True
    with db:
        return peak_for_trial(db, result, refresh=request.refresh_peak, measure_ok=not no_measure, notify=notify)


def write_trace(request: TraceRequest) -> TraceWritten:
    """Build the trial's trace, check its structure (a problem is edgebench's bug: nothing is written, the problems
    come back), write it, and with ``check`` load it in Perfetto's trace processor where one is installed."""
    from edgebench.host.files import file_name, write_text_replacing
    from edgebench.report.outputs import check_output_file, check_output_folder
    from edgebench.report.trace import chrome_trace
    from edgebench.report.trace_check import check_trace, dumps, find_trace_processor, perfetto_check
    from edgebench.store.trials import load_trial, power_series

    binary = find_trace_processor(request.trace_processor) if request.check else None
    if request.trace_processor and not Path(request.trace_processor).exists():
        raise UsageError(
            "--trace-processor", f"{request.trace_processor} does not exist; give the path of trace_processor_shell"
        )
    output = request.output
    to_stdout = output is not None and str(output) == "-"
    if binary is not None and to_stdout:
        raise UsageError("--check", "Perfetto's check needs a file: use -o FILE instead of -o -")
    if output is not None and not to_stdout:
        check_output_file("--output", output, f"{request.trial}.trace.json")  # before the store is read
    elif output is None:
        check_output_folder("--output", Path("."))  # the default file goes in the current folder
    stored = load_trial(request.store, request.trial)
    doc = chrome_trace(stored.result, stored.events, stored.samples, stored.spans,
                       power_series(stored, request.power_channel))  # fmt: skip
    events = doc["traceEvents"]
    counts = (sum(1 for e in events if e["ph"] == "X"), sum(1 for e in events if e["ph"] == "C"), len(events))
    written = TraceWritten(stored.result.trial_id, None, None, *counts, problems=check_trace(doc), checker=binary)
    if written.problems:
        return written
    text = dumps(doc)
    if to_stdout:
        return replace(written, text=text)
    target = output or Path(f"{file_name(stored.result.trial_id)}.trace.json")  # an id is data: one safe name
    write_text_replacing(target, text)
    perfetto = perfetto_check(target, binary, counts[0]) if binary is not None else None
    return replace(written, path=target, perfetto=perfetto)
