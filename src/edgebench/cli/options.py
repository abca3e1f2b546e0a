"""Turning command-line text into typed configuration, with errors that name the flag at fault."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError

from edgebench.config.settings import BY_FIELD, Setting
from edgebench.errors import UsageError, located
from edgebench.records.trial import Trial

if TYPE_CHECKING:
    from edgebench.targets import Target

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


def parse(flag: str, text: str | None, parser: Callable[[str], T]) -> T | None:
    """Run ``parser`` on a flag's text; a ``ValueError`` becomes a :class:`UsageError` naming ``flag``."""
    if text is None:
        return None
    try:
        return parser(text)
    except ValueError as exc:
        raise UsageError(flag, str(exc)) from None


def build(make: Callable[..., M], values: dict[str, Any], flags: dict[str, str]) -> M:
    """Validate ``values`` through ``make`` (a model, or :func:`~edgebench.config.trial.make_trial` for a Trial); the
    first error is reported against its command-line flag."""
    try:
        return make(**{k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        field, message = located(exc.errors()[0])
        flag = flags.get(field, "--" + field.replace("_", "-"))
        raise UsageError(flag, message) from None


def sysfs_root(path: Path | None) -> str:
    """``--sysfs-root``: a folder holding a device's ``/proc`` and ``/sys`` (a capture), or ``/`` when not given."""
    if path is None:
        return "/"
    if not path.is_dir():
        raise UsageError("--sysfs-root", f"{path} is not a folder; give a tree made by tests/fixtures/capture_sysfs.sh")
    if not (path / "sys").is_dir() and not (path / "proc").is_dir():
        raise UsageError(
            "--sysfs-root", f"{path} holds neither sys/ nor proc/; give the folder a capture was written to"
        )
    return str(path)


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


def role_cores(role: str, target: Target) -> tuple[int, ...] | None:
    """``--cores big``: the cores of the device's fast clusters, resolved as a sweep resolves them."""
    from edgebench.sweep.plan import resolve_cores

    try:
        return resolve_cores(role, 0, target.sysfs(), target.allowed_cores())
    except UsageError as exc:
        raise UsageError("--cores", exc.message) from None
