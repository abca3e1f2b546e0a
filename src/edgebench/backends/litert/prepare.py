"""Everything a LiteRT trial of a zoo model needs before it is timed, made in a child process: the ``.tflite`` file
(converted, quantized where asked), the input batch, and the check of the reduced precision against fp32.

Why a child process: converting needs torch and litert-torch (which imports jax, ~9 s), and a worker that imported
them carries their libraries into every memory figure the trial reports.  The worker runs
``python -m edgebench.backends.litert.prepare TRIAL_JSON OUT_JSON`` (:mod:`edgebench.backends.prepare_child`) and
imports only the runtime and numpy.  litert-torch prints its progress to stdout unless
``LITERT_TORCH_SHOW_PROGRESS=n``; that is set here, and the child's stdout goes to its stderr besides.

Routes (the converter's own, as the research spike found them on this machine):

* ``fp32``: ``litert_torch.convert(model, (batch,))`` of the torch trial's model (same definition, same seed),
  eval mode, at the trial's batch and input shape.
* ``fp16``: the fp32 file through ``ai_edge_quantizer``, weight-only ``FLOAT_CASTING`` to 16 bits for convolutions
  and fully connected layers (litert-torch has no fp16 option).  The weights are stored as fp16; XNNPACK
  dequantizes them when the model loads, so the arithmetic is fp32 (``env.litert_precision_applied``).
* ``int8-dynamic``: ``ai_edge_quantizer``'s ``dynamic_wi8_afp32`` recipe: int8 weights, activations quantized at
  run time from their own range (no calibration), float inputs and outputs.
* ``int8``: ``ai_edge_quantizer``'s ``static_wi8_ai8`` recipe, calibrated on the representative dataset every int8
  backend shares (:mod:`edgebench.backends.quantize`: 64 real digits for LeNet, else seeded inputs): int8 weights
  and activations, **int8 inputs and outputs** (the session quantizes the batch with the file's scale and zero
  point, and the comparison dequantizes the outputs).

Files are cached under ``$EDGEBENCH_CACHE_DIR/litert`` (default ``~/.cache/edgebench/litert``), keyed by everything
that decides their bytes: the workload, batch, input, classes, seed, the code's fingerprint
(:func:`edgebench.graph.cache.fingerprint`, torch's version with it), the converter's and quantizer's versions,
the precision and (full integer) the calibration inputs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.graph import cache
from edgebench.host.files import read_description, write_description
from edgebench.records.trial import Trial

#: ai_edge_quantizer's op names whose weights fp16 stores at 16 bits (every op its FLOAT_CASTING supports).
FP16_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "CONV_2D_TRANSPOSE", "EMBEDDING_LOOKUP")


@dataclass(frozen=True)
class Converted:
    """A converted ``.tflite`` file and what a session needs to know about the model it came from."""

    path: str
    params: int
    input_shape: tuple[int, ...]
    num_classes: int
    #: Qualified module names and their classes, for mapping per-op times back (:mod:`.layers`).
    modules: dict[str, str] = field(default_factory=dict)
    root_class: str = "model"
    converter: str = ""


@dataclass(frozen=True)
class Prepared:
    """What the worker loads: the model file, the batch (float32, the torch trial's), and the records."""

    model_path: str
    inputs_path: str
    converted: Converted
    #: The int8 trial's :class:`~edgebench.records.quantization.Quantization` as a dict; None otherwise.
    quantization: dict[str, Any] | None = None
    #: The fp16 file's agreement with fp32 on the same inputs (the shared check's figures); None otherwise.
    fp16_check: dict[str, Any] | None = None
    #: How the file was made from the fp32 conversion (quantizer, recipe), for ``env``.
    method: str | None = None


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _key(fields: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:20]


def convert_workload(
    model: str,
    *,
    batch_size: int,
    input_shape: tuple[int, ...] | None = None,
    num_classes: int | None = None,
    preset: str | None = None,
    seed: int = 0,
    cache_dir: Path | None = None,
) -> Converted:
    """The fp32 ``.tflite`` of ``model`` at this batch and input, from the cache when an equal one exists.

    Raises ``ValueError`` (one line) for a workload whose model does not take one image-like tensor."""
    from edgebench.graph.export import build_module, resolve_input
    from edgebench.workloads import get_workload

    workload = get_workload(model)
    shape, classes = resolve_input(workload.name, input_shape, num_classes, preset)
    fields = {
        "model": workload.name,
        "batch_size": batch_size,
        "input_shape": list(shape),
        "num_classes": classes,
        "seed": seed,
        "code": cache.fingerprint() if cache.cacheable(workload) else None,
        "litert_torch": version("litert-torch"),
    }
    directory = cache_dir or cache.cache_dir("litert")
    stem = f"{workload.name}-b{batch_size}-{'x'.join(map(str, shape))}-fp32-{_key(fields)}"
    path, meta_path = directory / f"{stem}.tflite", directory / f"{stem}.json"
    # a torn or edited sidecar, or a model file replaced beside it, is converted again (host.files.read_description)
    doc = read_description(path, meta_path, stem) if fields["code"] is not None else None
    try:
        if doc is not None:
            return Converted(**{**doc, "input_shape": tuple(doc["input_shape"])})
    except (ValueError, TypeError, KeyError):
        pass  # a sidecar of another shape (older code): convert again
    module, example = build_module(workload.name, batch_size, shape, classes, seed, False)
    directory.mkdir(parents=True, exist_ok=True)
    litert_torch = import_converter()
    tmp = path.with_suffix(".tflite.tmp")
    litert_torch.convert(module.eval(), (example,)).export(str(tmp))
    tmp.replace(path)
    import torch

    record = Converted(
        path=str(path),
        params=sum(p.numel() for p in module.parameters()),
        input_shape=shape,
        num_classes=classes,
        modules={name: type(m).__name__ for name, m in module.named_modules() if name},
        root_class=type(module).__name__,
        converter=f"litert-torch {version('litert-torch')} (torch {torch.__version__})",
    )
    write_description(path, meta_path, asdict(record), stem)
    return record


def import_converter() -> Any:
    """``litert_torch`` with its progress off stdout; a missing converter is one line naming the extra."""
    from edgebench.backends.litert import missing_converter

    missing = missing_converter()
    if missing:
        raise RuntimeError(missing)
    os.environ["LITERT_TORCH_SHOW_PROGRESS"] = "n"  # else rich progress lines go to stdout
    import litert_torch

    return litert_torch


def quantize(fp32_path: str, precision: str, representative: list[np.ndarray] | None) -> tuple[str, str]:
    """The ``precision`` file made from the fp32 one by ai_edge_quantizer (cached beside it), and its method;
    ``representative``: the calibration batches of a full-integer file."""
    from ai_edge_quantizer import algorithm_manager, qtyping, quantizer, recipe

    fields = {"from": Path(fp32_path).name, "precision": precision, "quantizer": version("ai-edge-quantizer")}
    if representative is not None:
        fields["calibration"] = hashlib.sha256(b"".join(b.tobytes() for b in representative)).hexdigest()[:16]
    out = Path(fp32_path).with_name(f"{Path(fp32_path).stem}-{precision}-{_key(fields)}.tflite")
    aeq = f"ai_edge_quantizer {version('ai-edge-quantizer')}"
    methods = {
        "fp16": f"{aeq}, weight-only FLOAT_CASTING to 16 bits ({', '.join(FP16_OPS)})",
        "int8-dynamic": f"{aeq}, recipe dynamic_wi8_afp32 (int8 weights per channel, activations quantized at run "
        "time)",
        "int8": f"{aeq}, recipe static_wi8_ai8 (int8 weights and activations, int8 inputs and outputs), calibrated",
    }
    if out.exists():
        return str(out), methods[precision]
    qt = quantizer.Quantizer(fp32_path)
    if precision == "fp16":
        for op in FP16_OPS:
            qt.add_weight_only_config(
                regex=".*",
                operation_name=getattr(qtyping.TFLOperationName, op),
                num_bits=16,
                algorithm_key=algorithm_manager.AlgorithmName.FLOAT_CASTING,
            )
    elif precision == "int8-dynamic":
        qt.load_quantization_recipe(recipe.dynamic_wi8_afp32())
    else:
        qt.load_quantization_recipe(recipe.static_wi8_ai8())
    calibrated = None
    if precision == "int8":
        assert representative is not None
        signature, name = signature_input(fp32_path)
        calibrated = qt.calibrate({signature: [{name: batch} for batch in representative]}, num_threads=1)
    tmp = out.with_suffix(".tmp.tflite")
    qt.quantize(calibrated, serialize_to_path=str(tmp), enable_progress_report=False)
    tmp.replace(out)
    return str(out), methods[precision]


def signature_input(path: str) -> tuple[str, str]:
    """The model's first signature and its (only) input's name, as ai_edge_quantizer's calibration wants them."""
    from ai_edge_litert.interpreter import Interpreter

    signatures = Interpreter(model_path=path).get_signature_list()
    key = next(iter(signatures))
    return key, signatures[key]["inputs"][0]


def runner(path: str) -> Callable[[np.ndarray], np.ndarray]:
    """``batch -> output`` through LiteRT's Interpreter, in float: an int8 input is quantized and an int8 output
    dequantized with the file's scale and zero point (:func:`to_model_input`)."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=path, num_threads=1)
    interpreter.allocate_tensors()
    inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]

    def run(batch: np.ndarray) -> np.ndarray:
        interpreter.set_tensor(inp["index"], to_model_input(batch, inp))
        interpreter.invoke()
        return from_model_output(interpreter.get_tensor(out["index"]), out)

    return run


def to_model_input(batch: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    """``batch`` as the input tensor ``detail`` takes it: float as is, int8/uint8 quantized with its scale and zero
    point (``q = round(x / scale) + zero_point``, clipped to the type's range)."""
    dtype = np.dtype(detail["dtype"])
    if dtype.kind == "f":
        return batch.astype(dtype)
    scale, zero = detail["quantization"]
    info = np.iinfo(dtype)
    return np.clip(np.round(batch / scale) + zero, info.min, info.max).astype(dtype)


def from_model_output(output: np.ndarray, detail: dict[str, Any]) -> np.ndarray:
    if np.dtype(detail["dtype"]).kind == "f":
        return output.astype(np.float32)
    scale, zero = detail["quantization"]
    return (output.astype(np.float32) - zero) * scale


def input_batch(trial: Trial, converted: Converted) -> np.ndarray:
    """The torch trial's own batch (synthetic from the seed, or the first batch of the real data), so that the
    backends time the same input."""
    from edgebench.workloads import get_workload

    session = get_workload(trial.model).session(
        trial.batch_size,
        input_shape=converted.input_shape,
        num_classes=converted.num_classes,
        seed=trial.seed,
        data=trial.data,
    )
    return session.inputs.detach().cpu().numpy().astype(np.float32).reshape(trial.batch_size, *converted.input_shape)


def prepare(trial: Trial, work_dir: Path) -> Prepared:
    """Convert (cached), write the trial's batch, and for a reduced precision quantize and check it against fp32."""
    from edgebench.backends.mnn.quiet import stdout_to_stderr

    with stdout_to_stderr():  # the converter's and quantizer's prints, whatever the environment says
        converted = convert_workload(
            trial.model,
            batch_size=trial.batch_size,
            input_shape=trial.input_shape,
            num_classes=trial.num_classes,
            preset=trial.preset,
            seed=trial.seed,
        )
        inputs_path = work_dir / "inputs.npy"
        np.save(inputs_path, input_batch(trial, converted))
        if trial.precision == "fp32":
            return Prepared(converted.path, str(inputs_path), converted)
        return _reduced(trial, converted, str(inputs_path))


def _reduced(trial: Trial, converted: Converted, inputs_path: str) -> Prepared:
    """The fp16 / int8 file and its comparison with fp32 on the shared inputs."""
    from dataclasses import replace

    from edgebench.backends.quantize import batches, calibration, compare_run, quantization_record

    calib = calibration(trial.model, converted.input_shape, preset=trial.preset, data=trial.data, seed=trial.seed)
    representative = batches(calib.calibrate, trial.batch_size) if trial.precision == "int8" else None
    path, method = quantize(converted.path, trial.precision, representative)
    comparison = compare_run(calib, trial.batch_size, runner(converted.path), runner(path))
    if trial.precision == "fp16":
        check = {k.replace("int8", "fp16"): v for k, v in comparison.items()}
        return Prepared(path, inputs_path, converted, fp16_check=check, method=method)
    if trial.precision == "int8-dynamic":
        compared = "held-out images" if calib.real else "seeded standard-normal inputs"
        calib = replace(calib, description=f"none: dynamic range, activation ranges taken at run time; compared on "
                        f"{len(calib.compare)} {compared}")  # fmt: skip
    kind = "full" if trial.precision == "int8" else "dynamic"
    record = quantization_record(method, calib, comparison, kind=kind)
    return Prepared(path, inputs_path, converted, quantization=record, method=method)


def run_in_child(trial: Trial, work_dir: Path) -> Prepared:
    """:func:`prepare` in a fresh interpreter (see the module's docstring); its failure is raised here, one line."""
    from edgebench.backends.prepare_child import run_in_child as run_child

    doc = run_child("edgebench.backends.litert.prepare", trial, work_dir, "the .tflite model")
    converted = doc["converted"]
    doc["converted"] = Converted(**{**converted, "input_shape": tuple(converted["input_shape"])})
    return Prepared(**doc)


def main(argv: list[str]) -> int:
    from edgebench.backends.prepare_child import child_main

    try:
        return child_main(prepare, argv)
    except (RuntimeError, ValueError) as exc:  # one line for the worker to report (a missing converter...)
        print(f"{type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
