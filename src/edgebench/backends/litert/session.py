"""A trial's LiteRT session as the worker drives it: the ``.tflite`` model on XNNPACK, its threads, its profiler.

The model file and the input batch of a zoo model come from :mod:`.prepare` (a child process, so this worker never
imports torch or the converter); a user's ``.tflite`` file is run as given, on random inputs from the trial's seed
(:mod:`edgebench.backends.model_file`).  Each step feeds the batch, runs the model and reads its outputs, as an app
does; a full-integer model takes int8 inputs, so its batch is quantized once when the model loads.

Untraced trials run through ``ai_edge_litert.interpreter.Interpreter`` with ``num_threads`` = the trial's threads
(XNNPACK's thread pool, the default delegate applied at ``allocate_tensors``).  ``--trace layers`` runs the steps
through the C API's compiled model with its profiler on (:mod:`.capi`, :mod:`.profile`), because the Python
interpreter has no profiler: a traced trial's step times are that path's, and ``env.litert_api`` says which ran.
LiteRT writes its own log lines (``INFO: Created TensorFlow Lite XNNPACK delegate for CPU.``) to file descriptor 2
while a model loads: they are caught into ``env.litert_load_log``, and nothing reaches stdout.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.base import TraceRecording
from edgebench.backends.litert import INSTALL, missing_converter
from edgebench.backends.litert.model_file import TfliteOp, read_model
from edgebench.backends.load import timing_load
from edgebench.backends.mnn.quiet import fd_output_to
from edgebench.records.trial import Trial

#: What fp16 means on this runtime, recorded with every fp16 trial.
FP16_APPLIED = "fp16 weights (stored), fp32 arithmetic: XNNPACK dequantizes the weights when the model loads"
#: The log line LiteRT prints when the default delegate takes the graph.
XNNPACK_LINE = "Created TensorFlow Lite XNNPACK delegate"


def import_runtime() -> Any:
    try:
        import ai_edge_litert
        from ai_edge_litert import interpreter
    except ImportError:
        raise RuntimeError(f"the litert backend needs the ai-edge-litert package: {INSTALL}") from None
    return ai_edge_litert, interpreter


class LiteRtSession:
    """A ``.tflite`` model ready to run, its inputs, and what the trial's record says of it."""

    def __init__(self, trial: Trial) -> None:
        self.trial = trial
        self.litert, self._interpreter_module = import_runtime()
        self.threads = trial.threads or 1
        self.traced = trial.trace == "layers"
        self.evaluate = None
        self.quantization: dict[str, Any] | None = None
        self.env: dict[str, Any] = {"litert": self.litert.__version__, "litert_threads": self.threads}
        if trial.model_file is not None:
            self._from_file(trial)
        else:
            self._from_zoo(trial)
        self.ops: tuple[TfliteOp, ...] = read_model(self.model_path).ops
        self._load()
        self.env["litert_worker_imported_torch"] = "torch" in sys.modules

    # -- the model and its inputs ------------------------------------------------------------------------------------

    def _from_zoo(self, trial: Trial) -> None:
        from edgebench.backends.litert.prepare import run_in_child

        missing = missing_converter()
        if missing:
            raise RuntimeError(missing)
        with tempfile.TemporaryDirectory(prefix="edgebench-litert-") as tmp:  # the model itself is in the cache
            prepared = run_in_child(trial, Path(tmp))
            self.batch = np.load(prepared.inputs_path)
        converted = prepared.converted
        self.model_path = prepared.model_path
        self.params = converted.params
        self.input_shape = tuple(converted.input_shape)
        self.num_classes: int | None = converted.num_classes
        self.modules: dict[str, str] | None = converted.modules
        self.root_class = converted.root_class
        self.quantization = prepared.quantization
        self.output_names: list[str] | None = None
        self._feeds: dict[str, np.ndarray] | None = None
        self.env.update(
            litert_conversion=converted.converter + (f"; then {prepared.method}" if prepared.method else ""),
            litert_prepared_in="a child process (torch and litert-torch convert there; this worker imports LiteRT "
            "and numpy only)",
            litert_precision_requested=trial.precision,
        )
        if trial.precision == "fp16":
            self.env.update(litert_precision_applied=FP16_APPLIED, litert_fp16_check=prepared.fp16_check)

    def _from_file(self, trial: Trial) -> None:
        from edgebench.backends import model_file as mf
        from edgebench.backends.litert.layers import file_modules, root_class

        path = trial.model_file or ""
        if not Path(path).is_file():
            raise RuntimeError(f"model file {path} is not on this device")
        info = mf.inspect(path)
        feeds, _ = mf.resolve_feeds(
            info, batch_size=trial.batch_size, input_name=trial.input_name, input_shape=trial.input_shape
        )
        self.model_path = path
        self._feeds = mf.random_inputs(feeds, trial.seed)
        self.batch = np.zeros(0, np.float32)
        self.params = info.params or 0
        shaped = next(f for f in feeds if f.name == (trial.input_name or feeds[0].name))
        self.input_shape = shaped.dims[1:]
        self.num_classes = None
        ops = read_model(path).ops
        self.modules = file_modules(ops)
        self.root_class = root_class(ops, Path(path).stem)
        self.output_names = [trial.output_name] if trial.output_name else None
        self.env.update(
            model_file=path,
            model_file_io=mf.describe(info),
            model_file_feeds={f.name: list(f.dims) for f in feeds},
            model_file_inputs="random, from the trial's seed (a model file brings no data)",
        )

    def _arrays(self, details: list[dict[str, Any]]) -> list[np.ndarray]:
        """One array per model input, in ``details``' order: the user's file's random feeds by name, or the zoo
        model's batch as its (only) input takes it (quantized for an int8 input)."""
        from edgebench.backends.litert.prepare import to_model_input

        if self._feeds is not None:
            by_name = self._feeds
            return [by_name[d["name"]] if d["name"] in by_name else list(by_name.values())[i]
                    for i, d in enumerate(details)]  # fmt: skip
        return [to_model_input(self.batch, details[0])]

    # -- loading -----------------------------------------------------------------------------------------------------

    def _load(self) -> None:
        with tempfile.TemporaryDirectory(prefix="edgebench-litert-") as tmp:
            log = Path(tmp) / "load.log"
            self._open(log)
            text = log.read_text(errors="replace").strip()
        self.env["litert_load_log"] = text.splitlines()[:20]
        applied = XNNPACK_LINE in text or self.traced  # the compiled model's CPU path is XNNPACK
        self.env["litert_delegate"] = "XNNPACK (LiteRT's default CPU delegate)" if applied else "none: builtin kernels"

    def _open(self, log: Path) -> None:
        """The runtime's model and its inputs, LiteRT's log lines written to ``log``."""
        interpreter = self._interpreter_module.Interpreter(model_path=self.model_path, num_threads=self.threads)
        details = interpreter.get_input_details()
        self.arrays = self._arrays(details)
        outputs = interpreter.get_output_details()
        wanted = self.output_names
        self._outputs = [o["index"] for o in outputs if wanted is None or o["name"] in wanted]
        self.env.update(
            litert_model=Path(self.model_path).name,
            litert_model_bytes=os.path.getsize(self.model_path),
            litert_inputs={
                d["name"]: {"shape": [int(x) for x in a.shape], "dtype": str(a.dtype)}
                for d, a in zip(details, self.arrays, strict=True)
            },
        )
        if any(np.dtype(d["dtype"]).kind in "iu" for d in details) and self._feeds is None:
            self.env["litert_input_quantization"] = (
                "the batch quantized once at load with the file's input scale and zero point (int8 inputs)"
            )
        if self.traced:
            from edgebench.backends.litert.capi import ProfiledModel

            del interpreter
            what = "litert: compiled model from the .tflite file (C API, XNNPACK, profiler on)"
            with fd_output_to(str(log)), timing_load(what) as load:
                self.profiled = ProfiledModel(self.model_path, self.threads)
            self.model_load = load.record
            by_name = {d["name"]: a for d, a in zip(details, self.arrays, strict=True)}
            self._profiled_arrays = [by_name.get(name, self.arrays[i]) for i, (name, _, _) in
                                     enumerate(self.profiled.inputs)]  # fmt: skip
            dtypes = {o["name"]: np.dtype(o["dtype"]) for o in outputs}
            self._profiled_outputs = [(i, dtypes.get(name, np.dtype(np.uint8))) for i, (name, _, _) in
                                      enumerate(self.profiled.outputs) if wanted is None or name in wanted]  # fmt: skip
            self.step = self._profiled_step
            self.env["litert_api"] = (
                "CompiledModel through libLiteRt.so's C API, profiler on (--trace layers): each step also registers "
                "and syncs its buffers and records every operator, so its time is not the Interpreter's"
            )
        else:
            what = "litert: Interpreter from the .tflite file, tensors allocated (default delegate applied)"
            with fd_output_to(str(log)), timing_load(what) as load:
                interpreter = self._interpreter_module.Interpreter(model_path=self.model_path, num_threads=self.threads)
                for detail, array in zip(details, self.arrays, strict=True):
                    if tuple(detail["shape"]) != array.shape:
                        interpreter.resize_tensor_input(detail["index"], list(array.shape), strict=True)
                interpreter.allocate_tensors()
            self.model_load = load.record
            self.interpreter = interpreter
            self._inputs = [(d["index"], a) for d, a in zip(details, self.arrays, strict=True)]
            delegates = sum(op["op_name"] == "DELEGATE" for op in interpreter._get_ops_details())
            self.step = self._interpreter_step
            self.env["litert_api"] = "Interpreter (ai_edge_litert.interpreter)"
            self.env["litert_delegate_partitions"] = delegates

    # -- the steps ---------------------------------------------------------------------------------------------------

    def _interpreter_step(self) -> None:
        interpreter = self.interpreter
        for index, array in self._inputs:
            interpreter.set_tensor(index, array)
        interpreter.invoke()
        for index in self._outputs:
            interpreter.get_tensor(index)

    def _profiled_step(self) -> None:
        self.profiled.write(self._profiled_arrays)
        self.profiled.run()
        for index, dtype in self._profiled_outputs:
            self.profiled.read(index, dtype)

    def train_step(self) -> float | None:
        raise RuntimeError("the litert backend runs inference only")  # Trial refuses --mode train first

    def infer_step(self) -> None:
        self.step()

    def sync(self) -> None:
        """``invoke`` returns when the outputs are computed (CPU): nothing is queued."""

    def to_inference(self) -> None:
        """A ``.tflite`` file is an inference graph already (batch norm folded, dropout removed)."""

    def reset_device_peak_memory(self) -> None:
        pass

    def device_peak_memory_bytes(self) -> int | None:
        return None

    def trace_recorder(self) -> TraceRecording | None:
        if not self.traced:
            return None
        from edgebench.backends.litert.profile import ProfileRecorder

        return ProfileRecorder(self)


def open_session(trial: Trial) -> LiteRtSession:
    return LiteRtSession(trial)
