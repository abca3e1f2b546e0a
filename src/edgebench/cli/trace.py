"""``edgebench trace TRIAL -o trace.json``: a stored trial as a Perfetto-loadable Chrome trace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from edgebench.cli.options import StoreOption, say


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
    from edgebench.workflows.layers import TraceRequest, write_trace

    done = write_trace(TraceRequest(trial, output, check, trace_processor, power_channel, store))
    if done.problems:  # a bug in edgebench, not in the user's input: say so and write nothing
        for problem in done.problems[:10]:
            print(f"edgebench: trace check: {problem}", file=sys.stderr)
        return fail(f"the trace of {done.trial_id} failed its structural check; nothing written", 1)
    if done.text is not None:
        sys.stdout.write(done.text + "\n")
    where = f"wrote {done.path}" if done.path else "wrote the trace to stdout"
    say(f"{where}: {done.slices} slices, {done.counters} counter values; open it in https://ui.perfetto.dev")
    if not check:
        return 0
    say(f"structural check: ok ({done.events} events)")
    if done.perfetto is None:
        say("Perfetto check skipped: no trace_processor_shell on PATH (set $EDGEBENCH_TRACE_PROCESSOR or "
            "--trace-processor to run it)")  # fmt: skip
        return 0
    say(f"Perfetto check: {'ok' if done.perfetto.ok else 'FAILED'}: {done.perfetto.message}")
    return 0 if done.perfetto.ok else fail(f"Perfetto did not import {done.path} as written", 1)
