"""MNN imported once per process, what it says the CPU supports, and how a trial's precision maps onto MNN's.

MNN prints ``The device supports: i8sdot:0, fp16:0, i8mm: 0, sve2: 0, sme2: 0`` when it is first imported: those
flags are the Arm features its low-precision and int8 kernels need.  The line is captured (never on stdout) and
stored with the trial.  Whether a low precision was applied is not taken from the flags alone: the same input is
run at fp32 and at the trial's precision, and identical outputs mean MNN ran fp32 (x86 builds keep fp32 for
``low`` where the CPU has no fp16 arithmetic).
"""

from __future__ import annotations

import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from edgebench.backends.mnn.quiet import fd_output_to

#: ``Trial.precision`` -> MNN's precision: the Interpreter's ``precision`` key and the executor's ``PrecisionMode``.
SESSION_PRECISION = {"fp32": "high", "fp16": "low", "bf16": "Low_BF16", "int8": "high"}
EXECUTOR_PRECISION = {"fp32": 1, "fp16": 2, "bf16": 3, "int8": 1}  # Precision_High, _Low, _Low_BF16
#: MNN_FORWARD_CPU
CPU = 0


@cache
def load() -> tuple[Any, str]:
    """``(MNN, the device line it printed)``; importing here keeps MNN's print off stdout."""
    with tempfile.NamedTemporaryFile("r", suffix=".log", encoding="utf-8", errors="replace") as log:
        with fd_output_to(log.name):
            import MNN
        text = Path(log.name).read_text(encoding="utf-8", errors="replace")
    return MNN, next((line.strip() for line in text.splitlines() if "device supports" in line), "")


def supported_features(line: str) -> dict[str, bool]:
    """``The device supports: i8sdot:0, fp16:0, ...`` -> ``{"i8sdot": False, "fp16": False, ...}``."""
    _, _, flags = line.partition(":")
    return {name: value == "1" for name, value in re.findall(r"(\w+):\s*(\d)", flags)}


def version() -> str:
    mnn, _ = load()
    return str(mnn.version())
