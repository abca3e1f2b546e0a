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
#: ``Interpreter::HintMode::CPU_CORE_IDS`` (MNN 3.6.1's ``include/MNN/Interpreter.hpp``).
CPU_CORE_IDS = 14


@cache
def _import() -> tuple[Any, str]:
    """``(MNN, what it printed at import)``: the device line, and on Linux with cpufreq its core groups."""
    with tempfile.NamedTemporaryFile("r", suffix=".log", encoding="utf-8", errors="replace") as log:
        with fd_output_to(log.name):
            import MNN
        text = Path(log.name).read_text(encoding="utf-8", errors="replace")
    return MNN, text


def load() -> tuple[Any, str]:
    """``(MNN, the device line it printed)``; importing here keeps MNN's print off stdout."""
    mnn, text = _import()
    return mnn, next((line.strip() for line in text.splitlines() if "device supports" in line), "")


def cpu_groups(text: str | None = None) -> list[list[int]]:
    """MNN's CPU core groups (``CPU Group: [ 0  1 ], 300000 - 1800000`` lines, one per cpufreq frequency class), as
    it printed them at import; empty where it found none (no ``/sys/devices/system/cpu/cpufreq``)."""
    text = _import()[1] if text is None else text
    return [[int(c) for c in ids.split()] for ids in re.findall(r"CPU Group: \[([\d\s]*)\]", text)]


def core_hint(cores: tuple[int, ...] | None, groups: list[list[int]], mode: str) -> tuple[list[int] | None, str]:
    """The ``CPU_CORE_IDS`` hint to give MNN's Interpreter (None: none) and what decides where MNN's threads run.

    MNN 3.6.1 keeps the hint only where it read core groups from cpufreq and every core is in one group (it never
    mixes clusters); otherwise it drops it (printing why when a core is in no group) and its threads run wherever
    the process may.  Training runs on the expression executor, whose Python API (``set_global_executor_config``)
    takes backend, precision and threads only: no hint reaches it.
    """
    if not cores:
        return None, "process affinity (the trial names no cores)"
    if mode == "train":
        return None, (
            "process affinity: MNN's Python training executor (set_global_executor_config) takes no core hint"
        )
    hint = sorted(cores)
    if not groups:
        return hint, (
            "process affinity: MNN 3.6.1 drops its CPU_CORE_IDS hint here (it found no CPU core groups: no "
            "/sys/devices/system/cpu/cpufreq)"
        )
    if not any(set(hint) <= set(group) for group in groups):
        return hint, "process affinity: MNN 3.6.1 drops its CPU_CORE_IDS hint for cores spanning its CPU groups"
    return hint, f"CPU_CORE_IDS hint {hint} (Interpreter.setSessionHint) and process affinity"


def supported_features(line: str) -> dict[str, bool]:
    """``The device supports: i8sdot:0, fp16:0, ...`` -> ``{"i8sdot": False, "fp16": False, ...}``."""
    _, _, flags = line.partition(":")
    return {name: value == "1" for name, value in re.findall(r"(\w+):\s*(\d)", flags)}


def version() -> str:
    mnn, _ = load()
    return str(mnn.version())


def host_tensor(mnn: Any, array: Any) -> Any:
    """``array`` as an MNN host tensor (float32, NCHW), to copy into a session's input before each run."""
    import numpy as np

    return mnn.Tensor(
        tuple(array.shape),
        mnn.Halide_Type_Float,
        np.ascontiguousarray(array, dtype=np.float32),
        mnn.Tensor_DimensionType_Caffe,
    )


def interpreter_session(
    mnn: Any, interpreter: Any, precision: str, inputs: Any, threads: int, core_ids: list[int] | None = None
) -> Any:
    """A CPU session of ``interpreter`` at ``precision`` and ``threads``, resized for ``inputs``.

    The session holds no input: MNN reuses the input tensor's memory for intermediate results, so a run leaves
    something else there (on mobilenet_v2, activations that shrink by ~1e-7 a run, through denormals that cost
    80x a normal step, to zeros). Copy the input in before every run (:func:`run`), as MNN's own benchmark does.
    """
    if core_ids:  # applies to the sessions created after it
        interpreter.setSessionHint(CPU_CORE_IDS, list(core_ids))
    config = {"backend": "CPU", "numThread": threads, "precision": SESSION_PRECISION[precision]}
    session = interpreter.createSession(config)
    interpreter.resizeTensor(interpreter.getSessionInput(session), tuple(inputs.shape))
    interpreter.resizeSession(session)
    return session


def run(interpreter: Any, session: Any, host: Any, callbacks: tuple[Any, Any] | None = None) -> None:
    """One inference of ``host`` (a :func:`host_tensor`) through ``session``, with MNN's per-op ``callbacks``
    (begin, end) where given; the input is copied in first (see :func:`interpreter_session`)."""
    interpreter.getSessionInput(session).copyFrom(host)
    if callbacks is None:
        interpreter.runSession(session)
    else:
        interpreter.runSessionWithCallBackInfo(session, *callbacks)


def read_output(mnn: Any, interpreter: Any, session: Any) -> Any:
    """The session's output as a new float32 array, through ``copyToHostTensor`` (an int8 model's output tensor is
    int8 inside MNN: its raw data read as float is garbage)."""
    import numpy as np

    output = interpreter.getSessionOutput(session)
    shape = tuple(output.getShape())
    host = mnn.Tensor(shape, mnn.Halide_Type_Float, np.zeros(shape, np.float32), mnn.Tensor_DimensionType_Caffe)
    output.copyToHostTensor(host)
    return np.array(host.getNumpyData(), dtype=np.float32, copy=True)
