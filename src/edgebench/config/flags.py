"""Reading a user's values with errors that name the flag at fault: a flag's text through a parser, a record through
its validation, a ``--sysfs-root`` folder.  The CLI and the workflows it calls both read input through here, so a
bad value is the same one-line error wherever it enters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

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
