"""``edgebench run``: train one model on this device and report how it went.

Its options are the Trial's settings as :mod:`edgebench.config.settings` declares them, plus a few of its own (output,
store, sysfs root): a setting added there is a flag here, with no change to this module.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from edgebench.cli.options import (
    JsonOption,
    RootOption,
    StoreOption,
    TargetOption,
    build,
    role_cores,
    setting_parameter,
    sysfs_root,
)
from edgebench.config.settings import SETTINGS, read_flag, with_adaptive_minimum
from edgebench.config.trial import make_trial
from edgebench.errors import UsageError
from edgebench.measure.notes import thread_oversubscription

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult


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

    ctx: typer.Context | None = options.get("ctx")

    def typed(field: str) -> bool:
        """Whether the user gave the flag (a default left out: a model file decides the batch it was not given)."""
        source = ctx.get_parameter_source(field) if ctx is not None else None
        return getattr(source, "name", None) != "DEFAULT"

    given = {
        s.field: read_flag(s, options[s.field]) for s in SETTINGS if options[s.field] is not None and typed(s.field)
    }
    from edgebench.launch.session import Launcher, open_store
    from edgebench.launch.trial import resolve_placement
    from edgebench.store.sqlite import close_or_discard
    from edgebench.targets import open_target

    target = open_target(
        options["target_spec"], sysfs_root=sysfs_root(options["sysfs_root_dir"]), root=options["root"] or None
    )
    if isinstance(given.get("cores"), str):  # big, little, all: this device's cpufreq clusters say which
        given["cores"] = role_cores(given["cores"], target)
    if getattr(given.get("cores"), "text", None):  # a hex mask: its typed text names the MNN suite's folders
        given["cores_mask"] = given["cores"].text
    if given.get("freq_khz") == "all":
        raise UsageError("--frequency", "all is for a sweep's frequencies axis; give one frequency, e.g. 1.7GHz")
    trial = build(make_trial, with_adaptive_minimum(given), {s.field: s.flag for s in SETTINGS})
    as_json, store, no_store = options["as_json"], options["store"], options["no_store"]
    placed = resolve_placement(trial, target)  # a bad --cores or --threads fails before anything starts
    assert placed.threads is not None and placed.cores is not None
    oversubscribed = thread_oversubscription(placed.threads, len(placed.cores))
    if oversubscribed:  # allowed, and recorded in the result: a measurement of oversubscription
        typer.echo(f"edgebench: warning: --threads: {oversubscribed}", err=True)
    db = open_store(store, no_store=no_store)  # an unusable or damaged store fails before the trial, not after
    launcher = Launcher(
        target,
        store=db,
        pins_frequency=trial.freq_khz is not None,  # pinned for the trial, the policies put back after
        frequency_flag="--frequency",
        notify=lambda note: typer.echo(f"note: {note}", err=True),
    )
    try:
        with launcher:
            outcome = launcher.launch(trial).finished
        result = outcome.result
        launcher.keep(outcome, then=lambda: _show(result, as_json))  # stored (or rescued) before it is printed
    finally:
        if db is not None:
            close_or_discard(db)  # refused before a trial was stored: no empty store left behind
    if db is not None and not as_json:  # the JSON names the trial; stderr stays the one line of a failure
        typer.echo(f"stored as trial {result.trial_id} in {db.path}")
    if no_store and outcome.spans_json is not None:
        typer.echo("note: with --no-store the spans are not kept for `edgebench layers` and `trace`", err=True)
    if not result.ok:
        return fail(f"trial {result.status}: {result.reason}", 1)
    return 0


def _show(result: TrialResult, as_json: bool) -> None:
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        from edgebench.report.summary import print_summary

        print_summary(result)


run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context),
        *map(setting_parameter, SETTINGS),
        *inspect.signature(_own_options, eval_str=True).parameters.values(),
    ],
    return_annotation=int,
)
