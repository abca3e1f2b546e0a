"""Parsing the quantities users type: durations (``10ms``, ``1h``), sizes (``8GiB``), percentages, frequencies."""

from __future__ import annotations

import math
import re

#: One mebibyte: sizes are stored in bytes and shown in MiB.
MIB = 2**20
#: The largest quantity a user may type (a count, bytes, seconds, kHz): 2**53, the largest whole number a float
#: (JSON, SQLite's REAL) holds exactly.  Far past any real budget, duration or frequency, and small enough that no
#: sum, product or conversion to float downstream overflows (a 400-digit --memory-budget raised OverflowError after
#: the trial had run).
MAX_QUANTITY = 2**53


def bounded(value: float, text: object) -> float:
    """``value`` (read from ``text``) if it is finite and at most :data:`MAX_QUANTITY`; else a ``ValueError``."""
    if not math.isfinite(value) or abs(value) > MAX_QUANTITY:
        shown = str(text) if len(str(text)) <= 40 else f"{str(text)[:20]}...({len(str(text))} characters)"
        raise ValueError(f"{shown!r} is too large: at most {MAX_QUANTITY:.4g} in its unit")
    return value


_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(us|ms|s|m|min|h)?\s*$", re.IGNORECASE)
_DURATION_S = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_DECIMAL = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12}
_BINARY = {"ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30, "ti": 2**40, "tib": 2**40}
_SIZE_BYTES = {**_DECIMAL, **_BINARY}


def parse_duration_s(text: str, default_unit: str = "s") -> float:
    """Seconds in ``text`` (``250us``, ``10ms``, ``2.5s``, ``30m``, ``1h``; a bare number is ``default_unit``)."""
    match = _DURATION.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a duration such as 10ms, 2s, 30m or 1h")
    return bounded(float(match.group(1)) * _DURATION_S[(match.group(2) or default_unit).lower()], text)


def parse_size_bytes(text: str) -> int:
    """Bytes in ``text`` (``512MiB``, ``8GiB``, ``2GB``, a bare number of bytes)."""
    match = _SIZE.match(str(text))
    unit = (match.group(2) or "").lower() if match else None
    if not match or unit not in _SIZE_BYTES:
        raise ValueError(f"{text!r} is not a size such as 512MiB or 8GiB")
    return int(bounded(float(match.group(1)) * _SIZE_BYTES[unit], text))


def parse_shape(text: str) -> tuple[int, ...]:
    """``3x224x224`` or ``3,224,224`` -> ``(3, 224, 224)``."""
    parts = re.split(r"[x,]", str(text).strip().lower())
    if not parts or not all(p.strip().isdigit() and len(p.strip()) <= 16 and int(p) > 0 for p in parts):
        raise ValueError(f"{text!r} is not a shape such as 3x224x224")
    return tuple(int(bounded(int(p), p)) for p in parts)


_PERCENT = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*%?\s*$")


def parse_percent(text: str | float) -> float:
    """Percent in ``text``: ``2%``, ``2`` and ``0.5%`` read as 2, 2 and 0.5 (a bare number is already percent).

    A bare number below 1 is refused: ``0.02`` is more likely a fraction meant as 2% than a target of 0.02%.
    """
    match = _PERCENT.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a percentage such as 2% or 0.5%")
    value = bounded(float(match.group(1)), text)
    if "%" not in str(text) and value < 1:
        raise ValueError(f"{text!r} is ambiguous: write {value * 100:g}% for a fraction, or {value:g}% if you mean it")
    return value


_FREQ = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(khz|mhz|ghz)?\s*$", re.IGNORECASE)
_FREQ_KHZ = {"khz": 1.0, "mhz": 1e3, "ghz": 1e6}


def parse_freq_khz(text: str | int) -> int:
    """kHz in ``text`` (``1708800``, ``1708800kHz``, ``1.7GHz``, ``600MHz``); a bare number is kHz, as in sysfs."""
    match = _FREQ.match(str(text))
    if not match:
        raise ValueError(f"{text!r} is not a frequency such as 1708800 (kHz), 600MHz or 1.7GHz")
    khz = round(bounded(float(match.group(1)) * _FREQ_KHZ[(match.group(2) or "khz").lower()], text))
    if khz <= 0:
        raise ValueError(f"{text!r} is not a positive frequency")
    return khz


def format_size(n_bytes: float) -> str:
    """``1536`` -> ``1.5 KiB``; binary units, as budgets are usually given."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"
