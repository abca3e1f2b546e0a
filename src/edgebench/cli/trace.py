"""``edgebench trace TRIAL -o trace.json``: a stored trial as a Perfetto-loadable Chrome trace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import StoreOption
from edgebench.errors import UsageError
from edgebench.host.files import file_name, write_text_replacing
from edgebench.report.outputs import check_output_file, check_output_folder


def trace(
    trial: Annotated[str, typer.Argument(help="Trial id, or a unique prefix of one.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Where to write the JSON ('-' = stdout) [default: TRIAL.trace.json]."),
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Validate the trace, and load it in Perfetto's trace processor if present.")
    ] = False,
    trace_processor: Annotated[
        str | None,
        typer.Option(
            help="Perfetto trace_processor_shell to use for --check [default: $EDGEBENCH_TRACE_PROCESSOR, PATH]."
        ),
    ] = None,
    power_channel: Annotated[
        str | None,
        typer.Option(help="Power channel for the extra power track, e.g. VDD_IN [default: the device total]."),
    ] = None,
    store: StoreOption = None,
) -> int:
    """Write a trial's steps, layer/op spans and sampled counters as trace-event JSON (open it in ui.perfetto.dev)."""
    from edgebench.cli import fail
    from edgebench.report.trace import chrome_trace
    from edgebench.report.trace_check import check_trace, dumps, find_trace_processor, perfetto_check
    from edgebench.store.trials import load_trial, power_series

    binary = find_trace_processor(trace_processor) if check else None
    if trace_processor and not Path(trace_processor).exists():
        raise UsageError(
            "--trace-processor", f"{trace_processor} does not exist; give the path of trace_processor_shell"
        )
    to_stdout = output is not None and str(output) == "-"
    if binary is not None and to_stdout:
        raise UsageError("--check", "Perfetto's check needs a file: use -o FILE instead of -o -")
    if output is not None and not to_stdout:
        check_output_file("--output", output, f"{trial}.trace.json")  # before the store is read and the trace built
    elif output is None:
        check_output_folder("--output", Path("."))  # the default file goes in the current folder
    stored = load_trial(store, trial)
    power = power_series(stored, power_channel)
    doc = chrome_trace(stored.result, stored.events, stored.samples, stored.spans, power)
    problems = check_trace(doc)
    if problems:  # a bug in edgebench, not in the user's input: say so and write nothing
        for problem in problems[:10]:
            print(f"edgebench: trace check: {problem}", file=sys.stderr)
        return fail(f"the trace of {stored.result.trial_id} failed its structural check; nothing written", 1)
    text = dumps(doc)
    events = doc["traceEvents"]
    n_slices = sum(1 for e in events if e["ph"] == "X")
    n_counters = sum(1 for e in events if e["ph"] == "C")
    if to_stdout:
        sys.stdout.write(text + "\n")
        target = None
    else:
        target = output or Path(f"{file_name(stored.result.trial_id)}.trace.json")  # an id is data: one safe name
        write_text_replacing(target, text)
    where = f"wrote {target}" if target else "wrote the trace to stdout"
    print(
        f"{where}: {n_slices} slices, {n_counters} counter values; open it in https://ui.perfetto.dev", file=sys.stderr
    )
    if not check:
        return 0
    print(f"structural check: ok ({len(events)} events)", file=sys.stderr)
    if binary is None:
        print(
            "Perfetto check skipped: no trace_processor_shell on PATH (set $EDGEBENCH_TRACE_PROCESSOR or "
            "--trace-processor to run it)",
            file=sys.stderr,
        )
        return 0
    assert target is not None
    result = perfetto_check(target, binary, n_slices)
    print(f"Perfetto check: {'ok' if result.ok else 'FAILED'}: {result.message}", file=sys.stderr)
    return 0 if result.ok else fail(f"Perfetto did not import {target} as written", 1)
