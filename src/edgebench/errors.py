"""Errors a user can fix, each naming the field at fault and what would fix it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails


class UsageError(Exception):
    """Bad input: printed as one line ``error: <field>: <message>`` with exit code 2."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def located(error: ErrorDetails) -> tuple[str, str]:
    """``(field, message)`` of one pydantic error: its location, or for a check across fields (located nowhere) the
    field its message starts with (``until_accuracy: needs real held-out data...``)."""
    field, message = (str(error["loc"][0]) if error["loc"] else ""), explain(error)
    if not field and ": " in message:
        field, message = message.split(": ", 1)
    return field, message


def explain(error: ErrorDetails) -> str:
    """One pydantic error in the words every command uses: ``must be greater than or equal to 1 (got 0)``.

    ``run``'s flags and a sweep file's keys both report through here, so one bad value reads the same in both.
    """
    kind = error["type"]
    if kind == "missing":
        return "required key is missing"
    message = error["msg"].removeprefix("Value error, ").replace("Input should be", "must be")
    if "input" in error and kind != "value_error":
        message += f" (got {shortened(repr(error['input']))})"
    return message


def shortened(text: str, limit: int = 60) -> str:
    """``text`` cut to about ``limit`` characters, saying how long it was: an error is one readable line, whatever
    the input (a 400-digit number, a megabyte of YAML)."""
    return text if len(text) <= limit else f"{text[: limit - 20]}... ({len(text)} characters)"
