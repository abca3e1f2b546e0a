"""Everything an ONNX Runtime trial needs before it is timed, made in a child process: the model file (exported,
int8-quantized where asked), the input batch, and the int8 accuracy check.

Why a child process: exporting and quantizing need torch (the PyTorch model, ``torch.onnx``, the MNIST loader), and
a worker that imported torch carries its resident libraries and allocator into every memory figure the trial
reports.  The worker runs ``python -m edgebench.backends.onnxruntime.prepare TRIAL_JSON OUT_JSON`` and reads what it
wrote; the worker itself imports only onnxruntime and numpy, so peak memory is ONNX Runtime's.

int8 is ``onnxruntime.quantization.quantize_static`` in the QDQ format (QuantizeLinear/DequantizeLinear pairs,
which ORT fuses into its integer kernels), per-channel int8 weights, uint8 activations, MinMax calibration on the
inputs :mod:`edgebench.backends.quantize` chooses (real digits where the preset ships them), after ORT's own
``quant_pre_process`` (shape inference, basic clean-up).  Quantized files are
cached beside the fp32 export, keyed by it and the calibration.
"""

from __future__ import annotations

import contextlib
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.graph.export import ExportedModel, export_workload
from edgebench.records.trial import Trial


@dataclass(frozen=True)
class Prepared:
    """What the worker loads: the model to run, the batch to feed it, and the int8 record (None at fp32)."""

    model_path: str
    inputs_path: str
    exported: ExportedModel
    quantization: dict[str, Any] | None


def prepare(trial: Trial, work_dir: Path) -> Prepared:
    """Export (cached), write the trial's input batch, and quantize for ``int8``."""
    exported = export_workload(
        trial.model,
        batch_size=trial.batch_size,
        input_shape=trial.input_shape,
        num_classes=trial.num_classes,
        preset=trial.preset,
        seed=trial.seed,
    )
    inputs_path = work_dir / "inputs.npy"
    np.save(inputs_path, input_batch(trial, exported))
    if trial.precision != "int8":
        return Prepared(exported.path, str(inputs_path), exported, None)
    model_path, record = quantize(exported, trial)
    return Prepared(model_path, str(inputs_path), exported, record)


def input_batch(trial: Trial, exported: ExportedModel) -> np.ndarray:
    """The torch trial's own batch (its task session's ``inputs``: synthetic from the seed, or the first batch of
    the real data), so that the two backends time the same input."""
    from edgebench.workloads import get_workload

    session = get_workload(trial.model).session(
        trial.batch_size,
        input_shape=exported.input_shape,
        num_classes=exported.num_classes,
        seed=trial.seed,
        data=trial.data,
    )
    return session.inputs.detach().cpu().numpy().astype(np.float32).reshape(exported.input_dims)


def quantize(exported: ExportedModel, trial: Trial) -> tuple[str, dict[str, Any]]:
    """The QDQ int8 model (cached) and its accuracy record against the fp32 export on the same inputs."""
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from edgebench.backends.quantize import calibration, compare_run, quantization_record

    calib = calibration(exported.model, exported.input_shape, preset=trial.preset, data=trial.data, seed=trial.seed)
    digest = hashlib.sha256(calib.calibrate.tobytes() + Path(exported.path).name.encode()).hexdigest()[:12]
    out = Path(exported.path).with_name(Path(exported.path).stem + f"-int8-qdq-{digest}.onnx")
    if not out.exists():

        class Reader(CalibrationDataReader):
            def __init__(self) -> None:
                from edgebench.backends.quantize import batches

                self._batches = iter(batches(calib.calibrate, exported.batch_size))

            def get_next(self) -> dict[str, np.ndarray] | None:
                batch = next(self._batches, None)
                return None if batch is None else {exported.input_name: batch}

        tmp, pre = out.with_suffix(".tmp.onnx"), out.with_suffix(".pre.onnx")
        with contextlib.redirect_stdout(sys.stderr):  # the quantizer's progress prints
            # ORT's own preparation: shape inference and basic graph clean-up (the exporter's Identity nodes that
            # share a bias would otherwise leave those biases unquantized).
            quant_pre_process(exported.path, str(pre), skip_symbolic_shape=True)
            quantize_static(
                str(pre),
                str(tmp),
                Reader(),
                quant_format=QuantFormat.QDQ,
                per_channel=True,
                weight_type=QuantType.QInt8,
                activation_type=QuantType.QUInt8,
            )
        tmp.replace(out)
        pre.unlink()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    fp32 = ort.InferenceSession(exported.path, options, providers=["CPUExecutionProvider"])
    int8 = ort.InferenceSession(str(out), options, providers=["CPUExecutionProvider"])
    name = exported.input_name
    comparison = compare_run(
        calib,
        exported.batch_size,
        lambda b: fp32.run(None, {name: b})[0],
        lambda b: int8.run(None, {name: b})[0],
    )
    method = (
        f"onnxruntime.quantization.quantize_static {ort.__version__}, QDQ format, per-channel int8 weights, "
        "uint8 activations, MinMax calibration"
    )
    return str(out), quantization_record(method, calib, comparison)


def run_in_child(trial: Trial, work_dir: Path) -> Prepared:
    """:func:`prepare` in a fresh interpreter (see the module's docstring); its failure is raised here, one line."""
    from edgebench.backends.prepare_child import run_in_child as run_child

    doc = run_child("edgebench.backends.onnxruntime.prepare", trial, work_dir, "the ONNX model")
    doc["exported"] = ExportedModel(**{**doc["exported"], "input_shape": tuple(doc["exported"]["input_shape"])})
    return Prepared(**doc)


if __name__ == "__main__":
    from edgebench.backends.prepare_child import child_main

    raise SystemExit(child_main(prepare, sys.argv[1:]))
