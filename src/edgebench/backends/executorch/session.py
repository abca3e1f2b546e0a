"""A trial's ExecuTorch session as the worker drives it: the lowered program, the runtime's threads, its SGD.

The program and the batch come from :mod:`.prepare` (a child process: this worker imports only torch and the
runtime's extensions, :mod:`.runtime`).  Inference calls the program's ``forward`` with the trial's batch each step
(the input copied in, the output left in the runtime's memory, as an app does).  Training calls the joint
forward-backward method and steps ``get_sgd_optimizer`` over the runtime's own weights with its gradients; the
outputs are sliced here, not by ExecuTorch's ``TrainingModule``, whose indices count the buffer updates of a model
with batch norm that the runtime does not return (so it pairs names with the wrong tensors).  The learning rate is
the workload's first (ExecuTorch's SGD takes one for its life: a decaying schedule is not applied).  A training
trial's inference passes run the inference program of the same kernels, lowered from the initial weights (a
training program has no inference method; a dense forward pass takes the same time whatever the weights' values).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.base import TraceRecording
from edgebench.backends.executorch import KERNELS
from edgebench.backends.executorch.lower import Instruction, Lowered
from edgebench.backends.executorch.memory import ExecuTorchMemory
from edgebench.backends.executorch.runtime import Runtime, load, quiet
from edgebench.backends.load import timing_load
from edgebench.records.trial import Trial
from edgebench.sensors.process import resident_bytes
from edgebench.workloads.spec import OptimizerSettings, Workload


class Program:
    """A loaded program's ``forward``, with the bytes it was loaded from kept alive (the runtime does not copy
    them) and, for a traced trial, the event tracer on."""

    def __init__(self, runtime: Runtime, path: str, *, etdump: bool) -> None:
        self.data = Path(path).read_bytes()
        with quiet():
            self.program = runtime.pybindings._load_program_from_buffer(self.data, enable_etdump=etdump)
            self.method = self.program.load_method("forward")

    def call(self, inputs: tuple[Any, ...]) -> list[Any]:
        """One execution: the inputs copied in, the outputs left in the runtime's memory (not cloned)."""
        return self.method.call(inputs, clone_outputs=False)


class TrainingProgram:
    """A training program's joint method and the runtime's SGD over its weights (built on the first step: the
    runtime exposes its weights only through a run's outputs)."""

    def __init__(self, runtime: Runtime, program: Program, lowered: Lowered, settings: OptimizerSettings) -> None:
        self.runtime, self.program, self.lowered, self.settings = runtime, program, lowered, settings
        self.optimizer: Any = None
        self.parameters: list[Any] = []
        self.gradients: list[Any] = []

    def step(self, inputs: Any, targets: Any, hook: Callable[[str, int, int], None] | None = None) -> float:
        """One training step: forward and backward in the runtime, then its SGD; the loss (before the update)."""
        start = time.perf_counter_ns()
        outputs = self.program.call((inputs, targets))
        if hook is not None:
            hook("execute", start, time.perf_counter_ns())
        loss = float(outputs[0])
        gradients, parameters = self.split(outputs)
        if self.optimizer is None:
            s = self.settings
            sgd = self.runtime.training_lib().get_sgd_optimizer
            self.optimizer = sgd(parameters, s.lr, s.momentum, 0.0, s.weight_decay, False)
            self.parameters, self.gradients = list(parameters.values()), list(gradients.values())
        start = time.perf_counter_ns()
        self.optimizer.step(gradients)
        if hook is not None:
            hook("optimizer", start, time.perf_counter_ns())
        return loss

    def split(self, outputs: list[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(gradients, parameters)`` by name from a training run's outputs: ``[user outputs, one gradient per
        parameter, the parameters]`` (buffer updates, such as batch norm's running statistics, are written in
        place and not returned, whatever the program's training metadata counts)."""
        names = self.lowered.parameters
        n = len(names)
        user = len(outputs) - 2 * n
        if user != self.lowered.user_outputs:
            raise RuntimeError(
                f"the training program returned {len(outputs)} outputs, not {self.lowered.user_outputs} user outputs "
                f"+ {n} gradients + {n} parameters"
            )
        gradients = dict(zip(names, outputs[user : user + n], strict=True))
        return gradients, dict(zip(names, outputs[user + n :], strict=True))


class ExecuTorchSession:
    """One trial on ExecuTorch; ``mode`` decides which program runs."""

    def __init__(self, trial: Trial) -> None:
        self.trial, self.mode = trial, trial.mode
        self.runtime = load(trial.threads or 1)
        self.runtime_bytes = resident_bytes()  # torch and the runtime loaded, nothing of the trial's yet
        self.kernels = KERNELS.get(trial.backend, "xnnpack")
        self.executions = 0
        #: Set by the trace recorder: told each execution's and each optimizer step's window.
        self.call_hook: Callable[[str, int, int], None] | None = None
        self.quantization: dict[str, Any] | None = None
        self.evaluate = None
        self._training: TrainingProgram | None = None
        self._infer_program: Program | None = None
        self._infer_lowered: Lowered | None = None
        etdump = trial.trace == "layers"
        if trial.model_file is not None:
            self._open_file(trial, etdump)
            return
        from edgebench.backends.executorch.prepare import run_in_child

        with tempfile.TemporaryDirectory(prefix="edgebench-executorch-") as tmp:
            prepared = run_in_child(trial, Path(tmp))
            self._load_batches(prepared)
        self.lowered = prepared.lowered
        self.module_tree: dict[str, list[Any]] | None = prepared.module_tree
        self.root_name = prepared.module_tree["names"][0]
        self.instructions: list[Instruction] | None = self.lowered.instructions
        self.input_shape = tuple(prepared.input_shape)
        self.num_classes: int | None = prepared.num_classes
        self.params = prepared.params
        self.quantization = prepared.quantization
        if prepared.infer_program is not None:
            self._infer_lowered = Lowered.from_json(prepared.infer_program)
        what = (
            "executorch: the program file read, loaded and its training method loaded (the optimizer is built on "
            "the first step: the runtime exposes its weights only after a run)"
            if self.mode == "train"
            else "executorch: the program file read, loaded and its forward method loaded"
            + (" (XNNPACK packs the weights here)" if self.lowered.delegates else "")
        )
        with timing_load(what) as load_timing:
            self.program = Program(self.runtime, self.lowered.path, etdump=etdump)
        self.model_load = load_timing.record
        self.env = self._env(prepared.dropout)

    # -- setting up -------------------------------------------------------------------------------------------
    def _load_batches(self, prepared: Any) -> None:
        torch = self.runtime.torch
        self.inputs = torch.from_numpy(np.load(prepared.inputs_path))
        self.targets = torch.from_numpy(np.load(prepared.targets_path))
        self.data = None if prepared.data_paths is None else [np.load(p) for p in prepared.data_paths]
        self.sampler = None
        if prepared.orders_path is not None:
            from edgebench.backends.mnn.batches import ReplayedSampler

            self.sampler = ReplayedSampler(np.load(prepared.orders_path, mmap_mode="r"), self.trial.batch_size)

    def _env(self, dropout: list[str]) -> dict[str, Any]:
        lowered = self.lowered
        env: dict[str, Any] = {
            **self._runtime_env(),
            "executorch_kernels": "portable" if self.mode == "train" else lowered.kernels,
            "executorch_lowering": lowered.how,
            "executorch_program": Path(lowered.path).name,
            "executorch_program_bytes": len(self.program.data),
            "executorch_planned_arena_bytes": lowered.planned_bytes,
            "executorch_delegates": lowered.delegates,
            "executorch_portable_ops": lowered.portable_ops,
            "executorch_prepared_in": "a child process (torch.export and the lowering there; this worker imports "
            "torch and ExecuTorch's runtime extensions only)",
        }
        if self.mode == "train":
            workload = self._workload()
            settings = workload.optimizer
            env["executorch_optimizer"] = (
                f"get_sgd_optimizer(lr={settings.lr:g}, momentum={settings.momentum:g}, dampening=0, "
                f"weight_decay={settings.weight_decay:g}, nesterov=False)"
            )
            if settings.schedule != "constant":
                env["executorch_lr_schedule"] = (
                    f"constant {settings.lr:g}: ExecuTorch's SGD takes one learning rate for its life, so the "
                    f"workload's {settings.schedule} schedule (torch's lr x (1 + {settings.gamma:g} step)^-"
                    f"{settings.power:g}) is not applied"
                )
            if self.kernels == "xnnpack":
                env["executorch_training_kernels"] = (
                    "portable: XNNPACK packs the weights when a program loads, so a program whose weights the "
                    "optimizer updates is not delegated to it"
                )
            if dropout:
                env["executorch_dropout"] = (
                    f"{', '.join(dropout)}: the runtime draws its own dropout masks (the loss follows torch's "
                    "statistically, not step by step)"
                )
            if self._infer_lowered is not None:
                env["executorch_inference_after_training"] = (
                    f"the {self._infer_lowered.kernels} inference program lowered from the initial weights (a "
                    "training program has no inference method)"
                )
        return env

    def _runtime_env(self) -> dict[str, Any]:
        return {
            "executorch": self.runtime.version,
            "executorch_threads": self.runtime.threads,
            "executorch_import_s": round(self.runtime.import_s, 3),
            "executorch_runtime_imports": "torch, executorch.extension.pybindings._C"
            + (", the training library" if self.mode == "train" else ""),
            "executorch_worker_imported_exir": any(m.startswith("executorch.exir") for m in sys.modules),
        }

    def _workload(self) -> Workload:
        from edgebench.workloads import get_workload

        return get_workload(self.trial.model)

    def _open_file(self, trial: Trial, etdump: bool) -> None:
        """A user's ``.pte`` (:mod:`edgebench.backends.model_file`): inference of ``forward`` on random inputs."""
        from edgebench.backends import model_file as mf
        from edgebench.backends.executorch.program import read

        path = trial.model_file or ""
        if not Path(path).is_file():
            raise RuntimeError(f"model file {path} is not on this device")
        info = mf.inspect(path)
        feeds, _ = mf.resolve_feeds(
            info, batch_size=trial.batch_size, input_name=trial.input_name, input_shape=trial.input_shape
        )
        forward = read(path)["forward"]
        torch = self.runtime.torch
        arrays = mf.random_inputs(feeds, trial.seed)
        self.file_inputs = tuple(torch.from_numpy(np.ascontiguousarray(arrays[f.name])) for f in feeds)
        with timing_load("executorch: the user's program file read, loaded and its forward method loaded") as timing:
            self.program = Program(self.runtime, path, etdump=etdump)
        self.model_load = timing.record
        self.lowered = Lowered(
            path=path,
            kernels="xnnpack" if forward.delegates else "portable",
            precision="as in the file",
            mode="infer",
            planned_bytes=list(forward.planned_bytes),
            instructions=[Instruction(op, None, "forward") for op in forward.instructions],
            delegates=list(forward.delegates),
            how="none: the .pte file as given",
        )
        self.inputs = self.file_inputs[0]
        self.module_tree = None
        self.root_name = Path(path).stem
        self.instructions = self.lowered.instructions
        shaped = next(f for f in feeds if f.name == (trial.input_name or feeds[0].name))
        self.input_shape = shaped.dims[1:]
        self.num_classes = None
        self.params = None
        self.env = {
            **self._runtime_env(),
            "executorch_kernels": "as the file was lowered",
            "executorch_delegates": list(forward.delegates),
            "executorch_planned_arena_bytes": list(forward.planned_bytes),
            "executorch_program_bytes": len(self.program.data),
            "model_file": path,
            "model_file_io": mf.describe(info),
            "model_file_feeds": {f.name: list(f.dims) for f in feeds},
            "model_file_inputs": "random, from the trial's seed (a model file brings no data)",
        }

    # -- steps ------------------------------------------------------------------------------------------------
    def _execute(self, program: Program, inputs: tuple[Any, ...]) -> list[Any]:
        if self.call_hook is None:
            outputs = program.call(inputs)
        else:
            start = time.perf_counter_ns()
            outputs = program.call(inputs)
            self.call_hook("execute", start, time.perf_counter_ns())
        self.executions += 1
        return outputs

    def _batch_inputs(self) -> tuple[Any, ...]:
        if self.trial.model_file is not None:
            return self.file_inputs
        return (self.inputs,)

    def infer_step(self) -> None:
        if self.mode == "train":
            assert self._infer_program is not None, "to_inference() loads the inference program first"
            self._infer_program.call((self._infer_inputs,))
            return
        self._execute(self.program, self._batch_inputs())

    def train_step(self) -> float | None:
        if self.sampler is not None and self.data is not None:
            torch = self.runtime.torch
            index = self.sampler.next()
            self.inputs = torch.from_numpy(np.ascontiguousarray(self.data[0][index]))
            self.targets = torch.from_numpy(np.ascontiguousarray(self.data[1][index]).astype(np.int64))
        if self._training is None:
            self._training = TrainingProgram(self.runtime, self.program, self.lowered, self._workload().optimizer)
        loss = self._training.step(self.inputs, self.targets, self.call_hook)
        self.executions += 1
        return loss

    def sync(self) -> None:
        """The runtime runs synchronously on the CPU: a step has finished when its call returns."""

    def to_inference(self) -> None:
        if self.mode != "train" or self._infer_program is not None:
            return
        if self._infer_lowered is None:
            raise RuntimeError("this training trial has no inference program (it was prepared with --infer-steps 0)")
        self._infer_program = Program(self.runtime, self._infer_lowered.path, etdump=False)
        self._infer_inputs = self.inputs[: self.trial.batch_size]

    def reset_device_peak_memory(self) -> None:
        """CPU only: the worker's VmHWM is the peak."""

    def device_peak_memory_bytes(self) -> int | None:
        return None

    def memory_categorizer(self) -> ExecuTorchMemory | _LazyMemory:
        """What ExecuTorch exposes of memory by category (:mod:`.memory`); a training trial's tensors are known after
        its first step."""
        if self.mode == "train":
            return _LazyMemory(self)
        return self._memory(None)

    def _memory(self, tensors: tuple[list[Any], list[Any]] | None) -> ExecuTorchMemory:
        inputs = sum(int(t.numel()) * int(t.element_size()) for t in self._batch_inputs())
        if self.mode == "train":
            inputs += int(self.targets.numel()) * int(self.targets.element_size())
        momentum = self._workload().optimizer.momentum if self.mode == "train" else 0.0
        return ExecuTorchMemory(mode=self.mode, batch_size=self.trial.batch_size, runtime_bytes=self.runtime_bytes,
                                program_bytes=len(self.program.data), planned_bytes=self.lowered.planned_bytes,
                                input_bytes=inputs, delegated=bool(self.lowered.delegates), tensors=tensors,
                                momentum=momentum)  # fmt: skip

    def trace_recorder(self) -> TraceRecording | None:
        if self.trial.trace == "none":
            return None
        from edgebench.backends.executorch.trace import EtdumpRecorder

        return EtdumpRecorder(self).install()

    @contextlib.contextmanager
    def etdump_file(self) -> Iterator[str]:
        """The program's ETDump so far, written to a temporary file (removed after the block)."""
        with tempfile.TemporaryDirectory(prefix="edgebench-etdump-") as tmp:
            path = str(Path(tmp) / "trial.etdp")
            with quiet():
                self.program.program.write_etdump_result_to_file(path, str(Path(tmp) / "debug.bin"))
            yield path


class _LazyMemory:
    """A training trial's categories, read once its first step has run (the runtime's tensors exist then)."""

    def __init__(self, session: ExecuTorchSession) -> None:
        self.session = session
        self.memory: ExecuTorchMemory | None = None

    def categorizing(self, step: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            out = step()
            self._read()
            return out

        return run

    def ensure(self, step: Callable[[], Any]) -> None:
        if self.memory is None:
            step()
            self._read()

    def _read(self) -> None:
        training = self.session._training
        if self.memory is None and training is not None and training.optimizer is not None:
            self.memory = self.session._memory((training.parameters, training.gradients))

    def with_peak(self, peak_bytes: int | None) -> Any:
        assert self.memory is not None
        return self.memory.with_peak(peak_bytes)


def open_session(trial: Trial) -> ExecuTorchSession:
    return ExecuTorchSession(trial)


def task_session(workload: Workload, batch_size: int, **options: Any) -> ExecuTorchSession:
    """``workload.session(..., backend="executorch")``: an ExecuTorch training session at these settings."""
    trial = Trial(
        model=workload.name,
        batch_size=batch_size,
        backend="executorch",
        input_shape=options.get("input_shape"),
        num_classes=options.get("num_classes"),
        seed=options.get("seed", 0),
        data=options.get("data"),
        infer_steps=0,
    )
    return ExecuTorchSession(trial)
