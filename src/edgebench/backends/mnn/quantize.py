"""MNN's int8: full int8 by its quantization tool where it succeeds, else weight-only by its converter; checked against
fp32 either way.

Full int8 (``quantization.kind = full``): the fp32 inference conversion goes through MNN's post-training quantizer,
the C++ binding ``_tools.mnnquant`` (the same extension module as the converter's binding, never the
``MNN.tools.mnnquant`` wrapper, which imports ``MNN.tools.utils.log``: it ``pip install``s a logging SDK and posts the
machine id to a remote log service; ``tests/unit/backends/mnn/test_mnn.py``
runs the binding under an audit hook that refuses sockets
and subprocesses).  It calibrates on the inputs every int8 backend shares (:mod:`edgebench.backends.quantize`: real
digits where the preset ships them), written as its ``sequence`` input type (one folder per sample: ``input.json``
with the shape, ``input.txt`` with the values), not images: ADMM activation scales (on LeNet's seeded weights the
tool's default, KL, kept the fp32 top-1 on 25% of the compared inputs, ADMM on 91%), MAX_ABS int8 weights.
Convolutions, pooling and the layout ops then run MNN's int8 kernels; the record notes how many ops ran in int8.
The quantizer runs in a process of its own (it segfaults when one process runs it twice).

Weight-only (``kind = weight_only``) is the fallback when the quantizer refuses the graph: the converter's
``--weightQuantBits 8`` stores every convolution's and matrix multiply's weights as int8 with per-channel scales,
and the runtime dequantizes them and computes in float; the record carries the quantizer's reason.

The accuracy check is the one every int8 backend shares: the same inputs through the fp32 and the int8 model,
top-1 agreement, and accuracy where the data is real.  An int8 model's output tensor is int8 inside MNN: it is read
through ``copyToHostTensor`` into a float tensor (:func:`edgebench.backends.mnn.runtime.read_output`).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from edgebench.backends.mnn.convert import ConversionError, convert, reason_of
from edgebench.backends.mnn.quiet import fd_output_to
from edgebench.graph.export import INPUT_NAME

if TYPE_CHECKING:
    from edgebench.backends.quantize import Calibration
    from edgebench.records.trial import Trial

METHOD = "MNN converter --weightQuantBits 8 (int8 weights with per-channel scales, float compute)"
FULL_METHOD = (
    "MNN post-training quantizer (C++ binding _tools.mnnquant): int8 weights (MAX_ABS) and activations (ADMM "
    "scales calibrated on the inputs below), int8 kernels"
)
#: The quantizer's settings beyond the calibration inputs (its JSON config's keys).
QUANTIZER_SETTINGS = {"feature_quantize_method": "ADMM", "weight_quantize_method": "MAX_ABS", "input_type": "sequence"}
#: The quantizer's last line when it wrote a model.
_DONE = "Quantize model done!"


def run_batch(mnn: Any, interpreter: Any, session: Any, batch: np.ndarray) -> np.ndarray:
    """``batch`` through an Interpreter session built for its shape; the output as a new float array."""
    from edgebench.backends.mnn.runtime import host_tensor, read_output, run

    run(interpreter, session, host_tensor(mnn, batch))
    return read_output(mnn, interpreter, session)


def write_calibration(samples: np.ndarray, folder: Path) -> dict[str, Any]:
    """``samples`` (``(n, *input_shape)``) as the quantizer's ``sequence`` inputs in ``folder``; its config."""
    shape = [1, *samples.shape[1:]]
    spec = json.dumps({"inputs": [{"name": INPUT_NAME, "shape": shape}]})
    for index, sample in enumerate(samples):
        sample_dir = folder / f"{index:05d}"
        sample_dir.mkdir(parents=True)
        (sample_dir / "input.json").write_text(spec)
        np.savetxt(sample_dir / f"{INPUT_NAME}.txt", sample.reshape(1, -1), fmt="%.9g")
    return {
        "path": str(folder),
        "used_sample_num": len(samples),
        "inputs": [{"name": INPUT_NAME, "shape": shape}],
        **QUANTIZER_SETTINGS,
    }


def quantize_full(fp32_path: Path, int8_path: Path, calibrate: np.ndarray) -> str:
    """MNN's quantizer on ``fp32_path``, calibrated on ``calibrate``; its log.  :class:`ConversionError` with its
    reason when it wrote no model (the binding returns ``True`` either way)."""
    int8_path.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="edgebench-mnnquant-") as tmp:
        config = write_calibration(calibrate, Path(tmp) / "samples")
        config_path = Path(tmp) / "config.json"
        config_path.write_text(json.dumps(config))
        log_path = Path(tmp) / "quantizer.log"
        with fd_output_to(str(log_path)):
            import _tools  # MNN's C++ tool bindings (in the MNN wheel), not MNN.tools

            _tools.mnnquant(["mnnquant", str(fp32_path), str(int8_path), str(config_path)])
        log = log_path.read_text(encoding="utf-8", errors="replace")
    if _DONE not in log or not int8_path.is_file() or int8_path.stat().st_size == 0:
        raise ConversionError(f"MNN's quantizer refused {fp32_path.name}: {reason_of(log)}")
    return log


def quantize_in_process_of_its_own(fp32_path: Path, int8_path: Path, calibrate: np.ndarray) -> None:
    """:func:`quantize_full` in a fresh interpreter: MNN 3.6.1's quantizer segfaults when a process runs it a second
    time, and a crash inside it must be a refusal (weight-only int8 then), not the trial's preparation dying.
    :class:`ConversionError` with the quantizer's reason or its signal."""
    import subprocess
    import sys

    samples = int8_path.with_suffix(".calibration.npy")
    np.save(samples, calibrate)
    try:
        run = subprocess.run(
            [sys.executable, "-m", "edgebench.backends.mnn.quantize", str(fp32_path), str(int8_path), str(samples)],
            capture_output=True,
            text=True,
        )
    finally:
        samples.unlink(missing_ok=True)
    if run.returncode != 0:
        lines = [line for line in run.stderr.splitlines() if line.strip()]
        why = lines[-1] if run.returncode == 1 and lines else f"the quantizer's process died (exit {run.returncode})"
        raise ConversionError(why)


def int8_ops(interpreter: Any, session: Any) -> tuple[int, int]:
    """``(ops that ran an int8 kernel, all ops)`` of one run (MNN names an op's type ``Convolution [ DT_INT8 ]``)."""
    types: list[str] = []

    def begin(tensors: Any, info: Any) -> bool:
        return True

    def end(tensors: Any, info: Any) -> bool:
        types.append(str(info.getType()))
        return True

    interpreter.runSessionWithCallBackInfo(session, begin, end)
    return sum("INT8" in t.upper() for t in types), len(types)


def int8_model(
    mnn: Any, onnx_path: Path, work_dir: Path, trial: Trial, input_shape: tuple[int, ...], inputs: np.ndarray
) -> tuple[Path, dict[str, Any]]:
    """The trial's int8 model (full where MNN's quantizer succeeds, else weight-only) and its
    :class:`~edgebench.records.quantization.Quantization` record (a dict), against the fp32 conversion on the shared
    inputs."""
    from edgebench.backends.quantize import calibration

    calib = calibration(trial.model, input_shape, preset=trial.preset, data=trial.data, seed=trial.seed)
    fp32_path = convert(onnx_path, work_dir / "fp32.mnn", for_training=False).mnn_path
    int8_path = work_dir / "int8.mnn"
    try:
        quantize_in_process_of_its_own(fp32_path, int8_path, calib.calibrate)
    except ConversionError as exc:
        int8_path = convert(onnx_path, work_dir / "infer.mnn", for_training=False, weight_quant_bits=8).mnn_path
        return int8_path, record(mnn, fp32_path, int8_path, trial, calib, inputs, refused=str(exc))
    return int8_path, record(mnn, fp32_path, int8_path, trial, calib, inputs)


def record(
    mnn: Any,
    fp32_path: Path,
    int8_path: Path,
    trial: Trial,
    calib: Calibration,
    inputs: np.ndarray,
    refused: str | None = None,
) -> dict[str, Any]:
    """The quantization record of ``int8_path``: full int8, or weight-only when the quantizer ``refused``."""
    from edgebench.backends.mnn.runtime import interpreter_session
    from edgebench.backends.quantize import compare_run, quantization_record

    threads = trial.threads or 1
    sessions = {}
    for name, path in (("fp32", fp32_path), ("int8", int8_path)):
        interpreter = mnn.Interpreter(str(path))
        sessions[name] = (interpreter, interpreter_session(mnn, interpreter, "fp32", inputs, threads))
    int8, total = int8_ops(*sessions["int8"])
    comparison = compare_run(
        calib,
        len(inputs),
        lambda b: run_batch(mnn, *sessions["fp32"], b),
        lambda b: run_batch(mnn, *sessions["int8"], b),
    )
    sizes = f"int8 model file {int8_path.stat().st_size} bytes vs fp32 {fp32_path.stat().st_size} bytes"
    if refused is None:
        notes = [f"MNN ran {int8} of the graph's {total} ops with int8 kernels", sizes]
        return quantization_record(FULL_METHOD, calib, comparison, kind="full", notes=notes)
    notes = [
        f"weight-only: activations and arithmetic stay float; full int8 was not possible: {refused}",
        sizes,
    ]
    out = quantization_record(METHOD, calib, comparison, kind="weight_only", notes=notes)
    compared = calib.description.split(", ", 1)[-1]
    out["calibration"] = f"none (weight-only quantization needs none); {compared}"
    return out


if __name__ == "__main__":  # python -m edgebench.backends.mnn.quantize FP32 INT8 SAMPLES_NPY
    import sys

    try:
        quantize_full(Path(sys.argv[1]), Path(sys.argv[2]), np.load(sys.argv[3]))
    except ConversionError as error:
        print(error, file=sys.stderr)
        raise SystemExit(1) from None
