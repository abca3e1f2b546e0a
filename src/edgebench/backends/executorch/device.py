"""Layer spans of a ``--command`` trial that ran ExecuTorch's ``executor_runner`` on a device without Python.

``executor_runner`` built with the event tracer (``EXECUTORCH_ENABLE_EVENT_TRACER=ON``) writes an ETDump at
``--etdump_path`` after its runs and logs ``ETDump written to file '<path>'.`` (``executor_runner.cpp``'s
``EventTraceManager::write_etdump_to_file``).  The ``executorch-runner`` step pattern reads that line, has the file
read back from the device (:mod:`.etdump` parses it here, with no ExecuTorch on the workstation) and places its
``Execute`` runs in the steps its ``Iteration`` lines gave, one run per execution in order (the steps there end at
each line's stamp on the device's clock and last the runner's own time of the execution).  The ops are labelled
by the program's instructions when the trial pushed the ``.pte`` (``--push model.pte``: read here by
:mod:`.program`), else by the events' own names.  A runner built without the tracer logs no such line: the trial
keeps its steps and says why it has no spans.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from edgebench.backends.executorch.etdump import NotETDump, executions, parse
from edgebench.backends.executorch.lower import Instruction
from edgebench.backends.executorch.trace import Labels, span_rows
from edgebench.records.spans import SpanTable
from edgebench.records.trial import Trial

_WRITTEN = re.compile(r"ETDump written to file '(?P<path>[^']+)'\.")
_NO_DATA = "No ETDump data available!"


def pushed_program(trial: Trial) -> list[Instruction] | None:
    """The instructions of the ``.pte`` the trial pushed (its ``forward``), or None."""
    from edgebench.backends.command.push import parse_push
    from edgebench.backends.executorch.program import NotProgram, read

    for spec in trial.push:
        local, _ = parse_push(spec)
        if Path(local).suffix.lower() == ".pte" and Path(local).is_file():
            try:
                forward = read(local).get("forward")
            except NotProgram:
                return None
            return None if forward is None else [Instruction(op, None, "forward") for op in forward.instructions]
    return None


def etdump_spans(
    trial: Trial, lines: Sequence[str], windows: Sequence[tuple[int, int]], fetch: Callable[[str], bytes | None]
) -> SpanTable | str:
    """The span table of the runs the runner's ETDump holds, placed in ``windows``; else why there is none."""
    written = next((m for m in map(_WRITTEN.search, lines) if m), None)
    if written is None:
        if any(_NO_DATA in line for line in lines):
            return "executor_runner wrote no ETDump (it logged 'No ETDump data available!')"
        return (
            "executor_runner logged no 'ETDump written to file' line: build it with EXECUTORCH_ENABLE_EVENT_TRACER=ON "
            "and give --etdump_path for per-op spans"
        )
    data = fetch(written["path"])
    if data is None:
        return f"the ETDump {written['path']} could not be read back from the device"
    try:
        runs = executions(parse(data))
    except NotETDump as exc:
        return f"the ETDump {written['path']}: {exc}"
    if len(runs) != len(windows):
        note = f"{len(runs)} runs in the ETDump, {len(windows)} steps in the output: the first of each are paired"
    else:
        note = "one ETDump run per Iteration line"
    return span_rows(
        runs[: len(windows)],
        windows,
        Labels.of(None, trial.model),
        pushed_program(trial),
        tid=0,
        training=False,
        notes={"source": f"executor_runner's ETDump ({written['path']}), read back from the device", "pairing": note},
    )
