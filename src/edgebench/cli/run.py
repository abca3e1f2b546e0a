"""``edgebench run``: train one model on this device and report how it went.

Its options are the Trial's settings as :mod:`edgebench.config.settings` declares them, plus a few of its own (output,
store, sysfs root): a setting added there is a flag here, with no change to this module.  The trial is run by
:func:`edgebench.workflows.trial.run_trial`.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from edgebench.cli.options import JsonOption, RootOption, StoreOption, TargetOption, say, setting_parameter
from edgebench.config.settings import SETTINGS, read_flag


def _own_options(
    *,
    as_json: JsonOption = False,
    store: StoreOption = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not record the trial.")] = False,
    sysfs_root_dir: Annotated[
        Path | None, typer.Option("--sysfs-root", help="Read sensors from a tree copied from a device, not /.")
    ] = None,
    target_spec: TargetOption = None,
    root: RootOption = False,
) -> None:
    """The options of ``run`` that are not settings of the Trial (those come from :data:`SETTINGS`)."""


def run(**options: Any) -> int:
    """Train a model on this device (or on --target): step latency, throughput, CPU use, memory, inference latency."""
    from edgebench.cli import fail
    from edgebench.config.flags import sysfs_root
    from edgebench.report.summary import print_summary
    from edgebench.workflows.trial import TrialRequest, run_trial

    ctx: typer.Context | None = options.get("ctx")

    def typed(field: str) -> bool:
        """Whether the user gave the flag (a default left out: a model file decides the batch it was not given)."""
        source = ctx.get_parameter_source(field) if ctx is not None else None
        return getattr(source, "name", None) != "DEFAULT"

    given = {
        s.field: read_flag(s, options[s.field]) for s in SETTINGS if options[s.field] is not None and typed(s.field)
    }
    as_json = options["as_json"]
    request = TrialRequest(given, options["target_spec"], sysfs_root(options["sysfs_root_dir"]), options["root"],
                           options["store"], options["no_store"])  # fmt: skip

    repeated = given.get("repeats", 1) != 1

    def show(result: Any) -> None:  # printed once stored (or rescued), so that printing cannot lose the trial
        if repeated:
            from edgebench.report.repeats import repeat_line

            say(repeat_line(result))  # one line per repeat; the configuration's table follows
        elif as_json:
            typer.echo(result.model_dump_json(indent=2))
        else:
            print_summary(result)

    done = run_trial(request, notify=say, on_result=show)
    if repeated:
        return print_repeats(done, as_json)
    result = done.result
    if done.store is not None and not as_json:  # the JSON names the trial; stderr stays the one line of a failure
        typer.echo(f"stored as trial {result.trial_id} in {done.store}")
    if done.spans_not_kept:
        say("note: with --no-store the spans are not kept for `edgebench layers` and `trace`")
    if not result.ok:
        return fail(f"trial {result.status}: {result.reason}", 1)
    return 0


def print_repeats(done: Any, as_json: bool) -> int:
    """The configuration's repeats: a table of each repeat's own figures and the interval over all of them (or the
    JSON of every repeat and of the configuration); exit 130 when interrupted, 1 when every repeat failed."""
    from edgebench.cli import fail
    from edgebench.report.repeats import configuration_json, configuration_line, repeats_table
    from edgebench.workflows.views import trial_label

    summary = done.summary
    if as_json:
        typer.echo(json.dumps({"sweep_id": done.sweep_id, "configuration": configuration_json(summary),
                               "repeats": [r.model_dump(mode="json") for r in done.repeats]}, indent=2))  # fmt: skip
    else:
        from rich.console import Console

        console = Console()
        console.print(repeats_table(summary, f"{trial_label(done.result.trial)}: {len(done.repeats)} repeats, each "
                                             "a fresh worker process"))  # fmt: skip
        console.print(configuration_line(summary), soft_wrap=True)
        if summary.note:
            console.print(f"warning: {summary.note}", soft_wrap=True)
        if done.store is not None:
            typer.echo(f"stored as sweep {done.sweep_id} in {done.store} (`edgebench compare {done.sweep_id} ...`)")
    if done.interrupted:
        return fail(f"interrupted after {len(done.repeats)} repeats", 130)
    if not any(r.ok for r in done.repeats):
        return fail(f"every repeat failed: {done.result.status}: {done.result.reason}", 1)
    return 0


run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context),
        *map(setting_parameter, SETTINGS),
        *inspect.signature(_own_options, eval_str=True).parameters.values(),
    ],
    return_annotation=int,
)
