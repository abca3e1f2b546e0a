"""The cold-start group of a result: the model's load and the first step after it, from the worker's events.

Pure: the worker times both (:mod:`edgebench.backends.load`, :class:`edgebench.agents.python.worker.FirstStep`) and this
only turns its events into the :class:`~edgebench.records.result.ColdStart` record, with notes on what limits
the figures.  A trial whose worker failed after the first step still has them: a model that loads and runs once
but then fails is worth knowing about.
"""

from __future__ import annotations

from edgebench.records.events import Event, FirstStep, Ready, first
from edgebench.records.result import ColdStart
from edgebench.records.trial import Trial


def cold_start(trial: Trial, events: list[Event]) -> ColdStart | None:
    """The trial's cold-start figures; None where its events carry none (a worker older than them, a trial that
    failed before its model loaded, a ``--command`` tool printing only a summary)."""
    ready = first(events, Ready)
    load = ready.model_load if ready else None
    step = first(events, FirstStep)
    if load is None and step is None:
        return None
    notes: list[str] = []
    fields: dict[str, object] = {}
    if load is not None:
        fields.update(
            model_load_s=load.seconds,
            model_load_peak_memory_bytes=load.peak_memory_bytes,
            model_load_added_memory_bytes=load.added_memory_bytes,
            model_load_what=load.what,
        )
        if load.peak_since != "load":
            notes.append(
                "the load's peak memory is the worker's since it started: the kernel refused to reset VmHWM "
                "(/proc/self/clear_refs)"
            )
    if step is not None:
        fields.update(
            first_step_ms=(step.end_ns - step.start_ns) / 1e6,
            first_step_mode=step.mode,
            first_step_counted_as="command" if trial.command else (step.counted_as or "extra"),
        )
        if trial.command:
            notes.append(
                "a --command workload's first step runs from the command's start to its first step line: the "
                "tool's own start and model load are in it, and nothing is timed apart"
            )
    elif trial.command:
        notes.append("no first step: the command's output gives no per-step lines")
    return ColdStart(**fields, notes=notes or None)  # type: ignore[arg-type]
