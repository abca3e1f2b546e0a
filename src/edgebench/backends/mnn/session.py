"""A trial's MNN session as the worker drives it: the converted model, MNN's optimizer, runtime and precision.

The model files, the batches and the checks come from :mod:`.prepare`, run in a child process: the torch
classification task at the trial's seed supplies the model definition, its initial weights and the batch
(synthetic, or the real digits with ``--data mnist``), so an MNN trial and a torch trial of the same settings start
from the same weights on the same inputs, while this worker imports MNN and numpy only (``env`` records
``mnn_worker_imported_torch``, False, so that its peak memory is MNN's).  Training runs the converted graph as an
``MNN.nn`` module in lazy mode (``MNN.expr.lazy_eval(True)``: without it ``opt.step`` silently updates nothing)
with ``MNN.optim.SGD`` at the workload's settings and lr policy; inference runs the inference conversion through an
``Interpreter`` session, the runtime whose per-op callbacks give the layer trace.  Every MNN call that may print
runs with file descriptor 1 sent to stderr.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.base import TraceRecording
from edgebench.backends.load import timing_load
from edgebench.backends.mnn import runtime
from edgebench.backends.mnn.batches import ReplayedSampler
from edgebench.backends.mnn.memory import MnnMemory, params_bytes
from edgebench.backends.mnn.model import load_trainable
from edgebench.backends.mnn.prepare import Prepared, run_in_child
from edgebench.backends.mnn.quiet import stdout_to_stderr
from edgebench.records.trial import Trial
from edgebench.sensors.process import resident_bytes
from edgebench.workloads import get_workload
from edgebench.workloads.spec import OptimizerSettings, Workload

#: Held-out digits evaluated per forward pass.
EVAL_BATCH = 500


def lr_at(settings: OptimizerSettings, step: int) -> float:
    """The learning rate of ``step`` (0-based), the same policy the torch task's scheduler applies."""
    if settings.schedule == "constant":
        return settings.lr
    return settings.lr * (1.0 + settings.gamma * step) ** -settings.power


class MnnSession:
    """One trial in MNN; ``mode`` decides whether the training module is built at all."""

    def __init__(self, trial: Trial) -> None:
        self.trial = trial
        self.mode = trial.mode
        self.threads = trial.threads or 1
        self.mnn, device_line = runtime.load()
        self.runtime_bytes = resident_bytes()  # MNN and numpy loaded, nothing of the trial's built yet
        self.file: Any = None
        self.core_ids, cores_note = runtime.core_hint(trial.cores, runtime.cpu_groups(), trial.mode)
        if trial.model_file is not None:
            self._open_file(trial, device_line, cores_note)
            return
        self.workload = get_workload(trial.model)
        self.quantization: dict[str, Any] | None = None
        self._step = 0
        #: Set by a trace recorder: a traced inference run, and a hook told each training step's phase times.
        self._traced_run: Callable[[], None] | None = None
        self._phase_hook: Callable[[int, int, int], None] | None = None
        # The files are read into memory by MNN's loaders and numpy: the folder goes once the model is built.
        with tempfile.TemporaryDirectory(prefix="edgebench-mnn-") as tmp:
            prepared = run_in_child(trial, Path(tmp))
            self._load(prepared)
            with stdout_to_stderr():
                if self.mode == "train":
                    self._build_training(prepared)
                else:
                    self._build_interpreter(prepared)
                    self.params = self.torch_params
        self.env: dict[str, Any] = {
            **self._runtime_env(device_line, cores_note),
            "mnn_conversion": "torch.onnx (TorchScript exporter) -> ONNX -> MNN converter (C++ binding)",
            "mnn_prepared_in": "a child process (torch exports there; this worker imports MNN and numpy only)",
            **self._build_env,
            "mnn_params": self.params,
            # Whether this worker imported torch by the time the model was built (it must not: see the docstring).
            "mnn_worker_imported_torch": "torch" in sys.modules,
        }

    def _runtime_env(self, device_line: str, cores_note: str) -> dict[str, Any]:
        """What the environment records of MNN itself and the placement, for a zoo model and a model file alike."""
        return {
            "mnn": runtime.version(),
            "mnn_threads": self.threads,
            "mnn_device_supports": device_line,
            "mnn_precision_requested": self.trial.precision,
            "mnn_cores": cores_note,
            "mnn_cpu_core_ids_hint": self.core_ids,
            "mnn_cpu_groups": runtime.cpu_groups(),
        }

    def _open_file(self, trial: Trial, device_line: str, cores_note: str) -> None:
        """A user's model file (:mod:`edgebench.backends.mnn.model_file`): inference only, random inputs."""
        from edgebench.backends.mnn.model_file import FileInterpreter
        from edgebench.backends.mnn.model_file import run_in_child as prepare_file

        self.quantization = None
        self._step = 0
        self._traced_run = None
        self._phase_hook = None
        self.evaluate = None
        with tempfile.TemporaryDirectory(prefix="edgebench-mnn-") as tmp:
            prepared = prepare_file(trial, Path(tmp))
            with stdout_to_stderr(), timing_load("mnn: Interpreter from the model file and its session") as load:
                self.file = FileInterpreter(self.mnn, prepared, trial, self.core_ids)
        self.model_load = load.record
        shaped = trial.input_name or next(iter(prepared.feeds))
        self.input_shape = tuple(prepared.feeds[shaped][1:])
        self.num_classes = None
        self.params = prepared.params  # None: an .mnn file's weights are not counted
        self.module_tree = prepared.module_tree
        self.inputs = np.zeros(0, np.float32)
        self.env = {
            **self._runtime_env(device_line, cores_note),
            "mnn_conversion": "ONNX -> MNN converter (C++ binding, in a child process)"
            if prepared.converted
            else "none: the .mnn file as given",
            "model_file": trial.model_file,
            "model_file_feeds": prepared.feeds,
            "model_file_inputs": "random, from the trial's seed (a model file brings no data)",
            "mnn_params": self.params if prepared.params is not None else "not read from an .mnn file",
            "mnn_worker_imported_torch": "torch" in sys.modules,
        }

    def _load(self, prepared: Prepared) -> None:
        """The child's files: the batch, its labels, the real data and the sampler's epoch orders."""
        self.input_shape = tuple(prepared.input_shape)
        self.num_classes = prepared.num_classes
        self.torch_params = prepared.torch_params
        self.module_tree = prepared.module_tree
        self.quantization = prepared.quantization
        self.inputs = np.load(prepared.inputs_path)
        self.targets = np.load(prepared.targets_path)
        self.data = None if prepared.data_paths is None else [np.load(p) for p in prepared.data_paths]
        self.sampler = None
        if prepared.orders_path is not None:  # mapped: only the epochs the trial reaches are read
            self.sampler = ReplayedSampler(np.load(prepared.orders_path, mmap_mode="r"), self.trial.batch_size)
        self.evaluate: Callable[[], float] | None = self._evaluate if self.data is not None else None
        self._build_env: dict[str, Any] = {}

    # -- training ---------------------------------------------------------------------------------------------
    def _build_training(self, prepared: Prepared) -> None:
        F = self.mnn.expr
        self._build_env["mnn_ops_rewritten"] = prepared.ops_rewritten
        F.lazy_eval(True)  # without it MNN's optimizer updates nothing and raises nothing
        F.set_global_executor_config(runtime.CPU, runtime.EXECUTOR_PRECISION[self.trial.precision], self.threads)
        with timing_load("mnn: the converted graph loaded as a trainable module, its SGD optimizer") as load:
            paths = (prepared.model_path, set(prepared.param_inits), prepared.converter_biases)
            graph = load_trainable(self.mnn, *paths)
            self.module, self.params = graph.module, graph.params
            settings = self.workload.optimizer
            self.optimizer = self.mnn.optim.SGD(self.module, settings.lr, settings.momentum, settings.weight_decay)
            self.module.train(True)
        self.model_load = load.record
        self._build_env["mnn_converter_biases_frozen"] = graph.converter_biases_frozen
        self._x, self._onehot = self._batch(self.inputs, self.targets)
        self._build_env["mnn_precision_applied"] = self._training_precision_applied()

    def _batch(self, inputs: np.ndarray, targets: np.ndarray) -> tuple[Any, Any]:
        F = self.mnn.expr
        x = F.const(np.ascontiguousarray(inputs, dtype=np.float32), list(inputs.shape), F.NCHW)
        labels = F.const(np.ascontiguousarray(targets, dtype=np.int32), [len(targets)], F.NCHW, F.int)
        return x, F.one_hot(labels, self.num_classes)

    def _training_precision_applied(self) -> bool | None:
        """Whether the low precision changes the forward pass (None at fp32); the module's weights are untouched."""
        if self.trial.precision in ("fp32", "int8"):
            return None
        F = self.mnn.expr
        self.module.train(False)
        low = np.array(self.module.forward(self._x).read(), copy=True)
        F.set_global_executor_config(runtime.CPU, runtime.EXECUTOR_PRECISION["fp32"], self.threads)
        high = np.array(self.module.forward(self._x).read(), copy=True)
        F.set_global_executor_config(runtime.CPU, runtime.EXECUTOR_PRECISION[self.trial.precision], self.threads)
        self.module.train(True)
        return not np.array_equal(low, high)

    def train_step(self) -> float | None:
        F, nn = self.mnn.expr, self.mnn.nn
        if self.sampler is not None and self.data is not None:
            index = self.sampler.next()
            self._x, self._onehot = self._batch(self.data[0][index], self.data[1][index])
        with stdout_to_stderr():
            t0 = time.perf_counter_ns()
            self.optimizer.learning_rate = lr_at(self.workload.optimizer, self._step)
            loss = nn.loss.cross_entropy(F.softmax(self.module.forward(self._x)), self._onehot)
            # Read before the update: in lazy mode a read after ``step`` recomputes the loss on the new weights.
            value = float(np.asarray(loss.read()))
            t_forward = time.perf_counter_ns()
            self.optimizer.step(loss)
            if self._phase_hook is not None:
                self._phase_hook(t0, t_forward, time.perf_counter_ns())
        self._step += 1
        return value

    def _evaluate(self) -> float:
        assert self.data is not None
        _, _, test_x, test_y = self.data
        F = self.mnn.expr
        self.module.train(False)
        correct = 0
        with stdout_to_stderr():
            for start in range(0, len(test_y), EVAL_BATCH):
                chunk = np.ascontiguousarray(test_x[start : start + EVAL_BATCH], dtype=np.float32)
                logits = np.asarray(self.module.forward(F.const(chunk, list(chunk.shape), F.NCHW)).read())
                correct += int((logits.argmax(axis=1) == test_y[start : start + EVAL_BATCH]).sum())
        self.module.train(True)
        return correct / len(test_y)

    # -- inference --------------------------------------------------------------------------------------------
    def _build_interpreter(self, prepared: Prepared) -> None:
        with timing_load("mnn: Interpreter from the model file and its session (createSession, resizeSession)") as load:
            self.interpreter = self.mnn.Interpreter(prepared.model_path)
            self.session = self._interpreter_session(self.trial.precision, self.inputs)
        self.model_load = load.record
        self._host_inputs = runtime.host_tensor(self.mnn, self.inputs)  # copied in before every run
        if self.trial.precision in ("fp16", "bf16"):
            reference = self._interpreter_session("fp32", self.inputs)
            self._build_env["mnn_precision_applied"] = not np.array_equal(self._run(self.session), self._run(reference))
        elif self.trial.precision == "int8":
            self._build_env["mnn_precision_applied"] = True

    def _interpreter_session(self, precision: str, inputs: np.ndarray) -> Any:
        return runtime.interpreter_session(self.mnn, self.interpreter, precision, inputs, self.threads, self.core_ids)

    def _run(self, session: Any) -> np.ndarray:
        self.run_interpreter(session)
        return runtime.read_output(self.mnn, self.interpreter, session)

    def run_interpreter(self, session: Any = None, callbacks: tuple[Any, Any] | None = None) -> None:
        """One inference of the trial's batch (copied in first: MNN overwrites a session's input as it runs)."""
        if self.file is not None:
            self.file.run(callbacks)
            return
        runtime.run(self.interpreter, self.session if session is None else session, self._host_inputs, callbacks)

    def infer_step(self) -> None:
        with stdout_to_stderr():
            if self.mode == "train":  # the trained module, in eval mode (batch norm on running statistics)
                np.asarray(self.module.forward(self._x).read())
            elif self._traced_run is not None:
                self._traced_run()
            else:
                self.run_interpreter()

    def outputs(self) -> np.ndarray:
        """The logits of the trial's batch through the inference runtime (cross-checks against torch)."""
        with stdout_to_stderr():
            if self.mode == "train":
                self.module.train(False)
                return np.array(self.module.forward(self._x).read(), copy=True)
            return self._run(self.session)

    def sync(self) -> None:
        """MNN's CPU runs synchronously: a step has finished when its call (and the read of its output) returns."""

    def to_inference(self) -> None:
        if self.mode == "train":
            self.module.train(False)

    def reset_device_peak_memory(self) -> None:
        """CPU only: the worker's VmHWM is the peak."""

    def device_peak_memory_bytes(self) -> int | None:
        return None

    def memory_categorizer(self) -> MnnMemory:
        """What MNN exposes of memory by category (:mod:`edgebench.backends.mnn.memory`)."""
        params = params_bytes(list(self.module.parameters)) if self.mode == "train" else None
        inputs = self.inputs if self.file is None else np.zeros(self.file.input_bytes, np.uint8)
        return MnnMemory(mode=self.mode, batch_size=self.trial.batch_size, runtime_bytes=self.runtime_bytes,
                         params=params, inputs=inputs)  # fmt: skip

    def trace_recorder(self) -> TraceRecording | None:
        if self.trial.trace == "none":
            return None
        from edgebench.backends.mnn.trace import recorder_for

        return recorder_for(self)


def open_session(trial: Trial) -> MnnSession:
    return MnnSession(trial)


def task_session(workload: Workload, batch_size: int, **options: Any) -> MnnSession:
    """``workload.session(..., backend="mnn")``: an MNN training session at these settings (tests and scripts)."""
    trial = Trial(
        model=workload.name,
        batch_size=batch_size,
        backend="mnn",
        input_shape=options.get("input_shape"),
        num_classes=options.get("num_classes"),
        seed=options.get("seed", 0),
        data=options.get("data"),
        infer_steps=0,
    )
    return MnnSession(trial)
