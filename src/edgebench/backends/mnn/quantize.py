"""MNN's int8: weight-only quantization by its converter (``--weightQuantBits 8``), checked against fp32.

The converter stores every convolution's and matrix multiply's weights as int8 with per-channel scales; the
runtime dequantizes them and computes in float, so this is ``weight_only`` int8 (a quarter of the weight bytes,
float arithmetic).  MNN's full int8 (activations too) is its separate quantization tool, which calibrates from
image files through ``_tools.mnnquant``; edgebench does not run it, so an MNN int8 result is always weight-only
and says so.  The accuracy check is the one every int8 backend shares (:mod:`edgebench.backends.quantize`): the
same inputs through the fp32 and the int8 conversion, top-1 agreement, and accuracy where the data is real.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from edgebench.trial import Trial

METHOD = "MNN converter --weightQuantBits 8 (int8 weights with per-channel scales, float compute)"


def run_batch(mnn: Any, interpreter: Any, session: Any, batch: np.ndarray) -> np.ndarray:
    """``batch`` through an Interpreter session built for its shape; the output as a new array."""
    host = mnn.Tensor(
        tuple(batch.shape),
        mnn.Halide_Type_Float,
        np.ascontiguousarray(batch, np.float32),
        mnn.Tensor_DimensionType_Caffe,
    )
    interpreter.getSessionInput(session).copyFrom(host)
    interpreter.runSession(session)
    return np.array(interpreter.getSessionOutput(session).getNumpyData(), copy=True)


def weight_only_record(
    mnn: Any, fp32_path: Path, int8_path: Path, trial: Trial, input_shape: tuple[int, ...], inputs: np.ndarray
) -> dict[str, Any]:
    """The trial's :class:`edgebench.result.Quantization` record (a dict) for the int8 conversion: the shared
    calibration's comparison inputs through both files, in batches of the trial's batch (``inputs``)."""
    from edgebench.backends.mnn.runtime import interpreter_session
    from edgebench.backends.quantize import calibration, compare_run, quantization_record

    calib = calibration(trial.model, input_shape, preset=trial.preset, data=trial.data, seed=trial.seed)
    threads = trial.threads or 1
    sessions = {}
    for name, path in (("fp32", fp32_path), ("int8", int8_path)):
        interpreter = mnn.Interpreter(str(path))
        sessions[name] = (interpreter, interpreter_session(mnn, interpreter, "fp32", inputs, threads))
    comparison = compare_run(
        calib,
        len(inputs),
        lambda b: run_batch(mnn, *sessions["fp32"], b),
        lambda b: run_batch(mnn, *sessions["int8"], b),
    )
    notes = [
        "weight-only: activations and arithmetic stay float; MNN's full int8 needs its image-based quantization "
        "tool, which edgebench does not run",
        f"int8 weights file {int8_path.stat().st_size} bytes vs fp32 {fp32_path.stat().st_size} bytes",
    ]
    record = quantization_record(METHOD, calib, comparison, kind="weight_only", notes=notes)
    compared = calib.description.split(", ", 1)[-1]
    record["calibration"] = f"none (weight-only quantization needs none); {compared}"
    return record
