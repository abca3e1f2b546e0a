"""Errors a user can fix, each naming the field at fault and what would fix it."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input: printed as one line ``error: <field>: <message>`` with exit code 2."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
