"""Turning command-line text into typed configuration, with errors that name the flag at fault."""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from edgebench.config.settings import BY_FIELD, Setting
from edgebench.records.trial import Trial


def say(line: str) -> None:
    """A workflow's note, warning or progress line, on stderr as it comes (stdout stays the command's output)."""
    print(line, file=sys.stderr, flush=True)


#: ``--target``: where the trial runs or the sensors are read (``local``, ``ssh://HOST``, ``adb://SERIAL`` or a name).
TargetOption = Annotated[
    str | None,
    typer.Option(
        "--target",
        help="Device to use: local, ssh://[user@]host[:port], adb://SERIAL (adb:// for the only one), or a name "
        "from the targets: of ~/.config/edgebench/config.yaml.  [default: local]",
    ),
]
#: ``--root``: use root on a remote target (``adb root``, then the su form).
RootOption = Annotated[
    bool, typer.Option("--root", help="Use root on the remote target (adb root or su) for frequencies and sensors.")
]

#: The options many commands share, declared once.
StoreOption = Annotated[Path | None, typer.Option(help="SQLite store [default: $EDGEBENCH_STORE or ~/.local/share].")]
NoStoreOption = Annotated[bool, typer.Option("--no-store", help="Do not record the trials.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")]
ResumeOption = Annotated[bool, typer.Option("--resume", help="Run only the trials this sweep has not stored.")]
CooldownOption = Annotated[
    str | None,
    typer.Option(
        "--cooldown",
        help="Between trials: a fixed pause (120s), or idle (until every temperature is back near idle).",
        show_default="none",
    ),
]


def setting_parameter(setting: Setting) -> inspect.Parameter:
    """``setting`` as a typer option taking text, read by the setting's own parser, so flags and sweep keys agree.

    A default that is one value is the option's default (``10ms``, read as a user's would be); one that depends on
    the device or on other flags is only shown (``one per core used``).
    """
    return inspect.Parameter(
        setting.field,
        inspect.Parameter.KEYWORD_ONLY,
        default=setting_default(setting),
        annotation=setting_option(setting),
    )


def setting_option(setting: Setting | str) -> Any:
    """The option type of ``setting`` (or a Trial field's): text read by the setting's parser (:func:`read_flag`),
    declared once in :data:`edgebench.config.settings.SETTINGS`, for every command that takes it."""
    setting = BY_FIELD[setting] if isinstance(setting, str) else setting
    names = (setting.flag, setting.short) if setting.short else (setting.flag,)
    fixed = not (setting.absent_is_none or setting.trial_default is None)
    shown = True if fixed else setting.shown_default or False
    option = typer.Option(*names, help=setting.help, show_default=shown, metavar=_metavar(setting))
    return Annotated[str | None, option]


def setting_default(setting: Setting | str) -> str | None:
    """The flag's default text: the setting's one value as a user writes it (``10m``), or None where it depends on
    the device or other flags (then only shown in ``--help``)."""
    setting = BY_FIELD[setting] if isinstance(setting, str) else setting
    if setting.absent_is_none or setting.trial_default is None:
        return None
    return setting.shown_default or str(setting.trial_default)


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


def request_options(request: type, options: dict[str, Any]) -> list[inspect.Parameter]:
    """A command's options, in the order of ``options``, for the fields of a workflow's request record: each field's
    type and default are the record's (declared once, in the workflow), its flag names and help the command's
    (``typer.Option(...)``, or an option type such as :data:`StoreOption`).  An entry that is not a field of the
    record gives ``(type, default)``: an option of the command alone, such as ``--json``."""
    hints = typing.get_type_hints(request)
    defaults = {f.name: f.default for f in dataclasses.fields(request)}
    parameters = []
    for name, option in options.items():
        if isinstance(option, tuple):
            annotation, default = option
        else:
            annotation = option if typing.get_origin(option) is Annotated else Annotated[hints[name], option]
            default = defaults[name]
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))  # fmt: skip
    return parameters
