"""Core sets written the two ways users know: a ``taskset`` hex mask or a Linux cpu list.

The MNN-based suite passes masks such as ``f0`` (cpu4-7) to ``taskset -a``; ``/sys`` and ``taskset -c`` write
lists such as ``0,2-3``.  As in ``taskset``, a bare token is a mask and a list needs a ``,`` or ``-``
(``2-2`` is the list holding cpu2 alone).
"""

from __future__ import annotations

import re

_HEX = re.compile(r"^(0x)?[0-9a-f]+$", re.IGNORECASE)
_LIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*,?$")


class TypedMask(tuple[int, ...]):
    """Core ids read from a hex mask, with the mask as the user typed it (``0f``, ``0x3``): the MNN-based suite
    names its result folders by the typed text, so ``0f`` must not come back as ``f``."""

    text: str

    def __new__(cls, cores: tuple[int, ...], text: str) -> TypedMask:
        made = super().__new__(cls, cores)
        made.text = text
        return made


def parse_cores(text: str) -> tuple[int, ...]:
    """Sorted core ids named by ``text``; ``ValueError`` with the fix when it is neither form."""
    text = text.strip().replace(" ", "")
    if "," in text or "-" in text:
        return parse_cpu_list(text)
    if not _HEX.match(text):
        raise ValueError(f"{text!r} is neither a hex mask (f0, 0x3) nor a cpu list (0,2-3)")
    mask = int(text, 16)
    if mask == 0:
        raise ValueError("mask 0 names no core; use e.g. 0x1 for cpu0")
    return TypedMask(tuple(i for i in range(mask.bit_length()) if mask >> i & 1), text)


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """Parse the kernel's list format (``0-3,6``), as in ``/sys/devices/system/cpu/online``."""
    text = text.strip()
    if not text:
        return ()
    if not _LIST.match(text):
        raise ValueError(f"{text!r} is not a cpu list such as 0,2-3")
    cores: set[int] = set()
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        first, last = int(lo), int(hi or lo)
        if last < first:
            raise ValueError(f"range {part!r} runs backwards")
        cores.update(range(first, last + 1))
    return tuple(sorted(cores))


def format_mask(cores: tuple[int, ...] | list[int]) -> str:
    """Hex mask as ``taskset`` prints it, without ``0x`` (``(4, 5, 6, 7)`` -> ``f0``)."""
    return format(sum(1 << c for c in cores), "x")


def format_cpu_list(cores: tuple[int, ...] | list[int]) -> str:
    """Compact list form (``(0, 1, 2, 5)`` -> ``0-2,5``)."""
    parts: list[str] = []
    ordered = sorted(set(cores))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
