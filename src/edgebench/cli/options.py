"""Turning command-line text into typed configuration, with errors that name the flag at fault."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError

from edgebench.errors import UsageError, located

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
ThreadsOption = Annotated[int | None, typer.Option(help="Intra-op threads [default: one per core used].")]
CoresOption = Annotated[str | None, typer.Option(help="Cores to run on: hex mask (f0) or list (0,2-3).")]
