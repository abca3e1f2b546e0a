"""``edgebench run``: train one model on this device and report how it went.

Its options are the Trial's settings as :mod:`edgebench.config.settings` declares them, plus a few of its own (output,
store, sysfs root): a setting added there is a flag here, with no change to this module.
"""

from __future__ import annotations

import contextlib
import inspect
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from edgebench.cli.options import JsonOption, RootOption, StoreOption, TargetOption, build, sysfs_root
from edgebench.config.settings import SETTINGS, Setting, read_flag, with_adaptive_minimum
from edgebench.config.trial import make_trial
from edgebench.errors import UsageError
from edgebench.measure.notes import thread_oversubscription
from edgebench.records.trial import Trial

if TYPE_CHECKING:
    from edgebench.targets import Target


def _flag(setting: Setting) -> inspect.Parameter:
    """``setting`` as a typer option taking text, read by the setting's own parser, so flags and sweep keys agree.

    A default that is one value is the option's default (``10ms``, read as a user's would be); one that depends on
    the device or on other flags is only shown (``one per core used``).
    """
    names = (setting.flag, setting.short) if setting.short else (setting.flag,)
    if setting.absent_is_none or setting.trial_default is None:
        default, shown = None, setting.shown_default or False
    else:
        default, shown = setting.shown_default or str(setting.trial_default), True
    option = typer.Option(*names, help=setting.help, show_default=shown, metavar=_metavar(setting))
    return inspect.Parameter(
        setting.field, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[str | None, option]
    )


def _metavar(setting: Setting) -> str:
    """What ``--help`` shows a value as: the Trial field's number type where the value is a plain number."""
    kinds = set(_leaf_types(Trial.model_fields[setting.field].annotation))
    if setting.parse is None and kinds & {int, float}:
        return "<int>" if int in kinds else "<float>"
    return "<str>"


def _leaf_types(annotation: Any) -> Iterator[Any]:
    """The plain types inside ``Annotated[int, ...] | None`` and the like."""
    args = typing.get_args(annotation)
    if not args:
        yield annotation
        return
    if typing.get_origin(annotation) is Annotated:
        args = args[:1]
    for arg in args:
        yield from _leaf_types(arg)


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

    given = {s.field: read_flag(s, options[s.field]) for s in SETTINGS if options[s.field] is not None}
    from edgebench.runner.launch import resolve_placement, run_trial
    from edgebench.targets import open_target

    target = open_target(
        options["target_spec"], sysfs_root=sysfs_root(options["sysfs_root_dir"]), root=options["root"] or None
    )
    if isinstance(given.get("cores"), str):  # big, little, all: this device's cpufreq clusters say which
        given["cores"] = _role_cores(given["cores"], target)
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
    if not no_store:
        from edgebench.store import Store

        db = Store(store)  # an unusable store fails before the trial, not after
        db.verify()  # a damaged store too: its header can be intact, so opening it proves nothing
    with _pinned_frequency(trial, target):
        outcome = run_trial(trial, target=target)
    result = outcome.result
    if as_json:  # printed before it is stored: a store that fails now cannot take the figures with it
        typer.echo(result.model_dump_json(indent=2))
    else:
        from edgebench.report.summary import print_summary

        print_summary(result)
    if not no_store:
        from edgebench.store.rescue import save_or_keep

        with db:
            save_or_keep(db, result, outcome.series())
        if not as_json:  # the JSON names the trial; stderr stays the one line of a failure
            typer.echo(f"stored as trial {result.trial_id} in {db.path}")
    if no_store and outcome.spans_json is not None:
        typer.echo("note: with --no-store the spans are not kept for `edgebench layers` and `trace`", err=True)
    if not result.ok:
        return fail(f"trial {result.status}: {result.reason}", 1)
    return 0


run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [*map(_flag, SETTINGS), *inspect.signature(_own_options, eval_str=True).parameters.values()],
    return_annotation=int,
)


def _role_cores(role: str, target: Target) -> tuple[int, ...] | None:
    """``--cores big``: the cores of the device's fast clusters, resolved as a sweep resolves them."""
    from edgebench.sweep.plan import resolve_cores

    try:
        return resolve_cores(role, 0, target.sysfs(), target.allowed_cores())
    except UsageError as exc:
        raise UsageError("--cores", exc.message) from None


@contextlib.contextmanager
def _pinned_frequency(trial: Trial, target: Target) -> Iterator[None]:
    """``--frequency``: pin the trial's cores to it for the trial and put the policies back after, as a sweep does."""
    if trial.freq_khz is None:
        yield
        return
    from edgebench.host.frequency import FrequencyControl

    control = FrequencyControl(
        target.sysfs(), is_root=target.is_root, notify=lambda note: typer.echo(f"note: {note}", err=True)
    )
    try:
        control.check()
    except UsageError as exc:
        raise UsageError("--frequency", exc.message.replace("leave frequencies out", "leave --frequency out")) from None
    with control:
        control.pin(trial.cores, trial.freq_khz)
        yield
