"""A trial's torch session as the worker drives it: threads, the CUDA memory cap, autocast, sync and peak stats.

Everything the worker's loop once did with torch itself is here, behind :class:`edgebench.backends.base.BackendSession`.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from typing import Any

import torch

from edgebench.backends.base import TraceRecording
from edgebench.backends.load import timing_load
from edgebench.backends.torch.memory import MemoryCategorizer
from edgebench.records.trial import Trial
from edgebench.sensors.process import resident_bytes
from edgebench.workloads import get_workload
from edgebench.zoo.precision import at_precision

#: Batch of the int8 calibration and accuracy check (its inputs are the same whatever the trial's batch).
CHECK_BATCH = 64


def limit_gpu_memory(device: str, budget_bytes: int | None) -> None:
    """Cap torch's CUDA allocator at the budget (a fraction of the device's memory)."""
    if budget_bytes is None or not device.startswith("cuda"):
        return
    index = torch.cuda.current_device() if device == "cuda" else int(device.split(":")[1])
    total = torch.cuda.get_device_properties(index).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, budget_bytes / total), index)


def parallel_backend() -> str:
    """ATen's intra-op parallel backend (OpenMP, native thread pool...), as ``torch.__config__`` reports it."""
    for line in torch.__config__.parallel_info().splitlines():
        if line.startswith("ATen parallel backend"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def torch_env() -> dict[str, Any]:
    """torch's threading as this trial runs it, stored with the trial's environment."""
    return {
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "torch_interop_threads": torch.get_num_interop_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "parallel_backend": parallel_backend(),
    }


class TorchSession:
    """A task's session (model, optimizer, batch) wrapped with the trial's precision, device and tracing."""

    def __init__(self, trial: Trial) -> None:
        preload_libraries(trial)
        # Before anything of the trial's is built: the interpreter and torch's libraries, the runtime category.
        self.runtime_bytes = resident_bytes()
        torch.set_num_threads(trial.threads or 1)
        limit_gpu_memory(trial.device, trial.memory_budget_bytes)
        workload = get_workload(trial.model)
        preset = workload.preset(trial.preset) if trial.preset else None
        input_shape = trial.input_shape or (preset.input_shape if preset else None)
        num_classes = trial.num_classes or (preset.num_classes if preset else None)
        self.trial = trial
        from edgebench.workloads.lm import LMSettings, decoder_shape, is_token_model

        lm = LMSettings.of(trial, decoder_shape(workload)) if is_token_model(workload) else None
        with timing_load(
            f"torch: the task built (model at its initial weights, optimizer, batch) on {trial.device}"
        ) as load:
            self.task = workload.session(
                trial.batch_size,
                input_shape=input_shape,
                num_classes=num_classes,
                device=trial.device,
                seed=trial.seed,
                data=trial.data,
                lm=lm,
            )
            if self.trial.device.startswith("cuda"):
                torch.cuda.synchronize()  # the copies to the device have landed
        #: int8 quantization (calibration, conversion) is a build step an app does not repeat: after the load.
        self.model_load = load.record
        self.model: torch.nn.Module = self.task.model
        self.cuda = trial.device.startswith("cuda")
        self.params = sum(p.numel() for p in self.model.parameters())
        #: A language model's set-up record, its held-out loss and its timed generation (None for other models).
        self.language_model = getattr(self.task, "language_model", None)
        self.held_out: Callable[[], dict[str, float]] | None = getattr(self.task, "held_out", None)
        self._generate = getattr(self.task, "generate", None)
        # A real dataset decides the input and classes (the text's alphabet, the digits' shape).
        self.input_shape = tuple(getattr(self.task, "input_shape", None) or input_shape or workload.input_shape)
        self.num_classes = getattr(self.task, "num_classes", None) or num_classes or workload.num_classes
        self.env = torch_env()
        self.evaluate: Callable[[], float] | None = getattr(self.task, "evaluate", None)
        self.quantization: dict[str, Any] | None = None
        if trial.precision == "int8":
            self._quantize(trial)
        self._train = at_precision(self.task.train_step, trial.precision, trial.device)
        self._infer = at_precision(self.task.infer_step, trial.precision, trial.device)

    def _quantize(self, trial: Trial) -> None:
        """Swap the task's model for its int8 static quantization (inference only; ``Trial`` refuses training)."""
        from edgebench.backends.quantize import calibration
        from edgebench.backends.torch.int8 import quantize

        inputs = getattr(self.task, "inputs", None)
        if not isinstance(inputs, torch.Tensor) or not inputs.is_floating_point():
            raise ValueError(f"int8: {trial.model}'s task does not feed its model one float tensor; not quantized")
        calib = calibration(trial.model, tuple(inputs.shape[1:]), preset=trial.preset, data=trial.data, seed=trial.seed)
        # A torch model takes any batch: calibrate and compare in batches of 64, not one input at a time.
        quantized, self.quantization = quantize(self.model, inputs, calib, max(trial.batch_size, CHECK_BATCH))
        self.task.model = self.model = quantized
        for unused in ("optimizer", "scheduler"):  # they hold the fp32 weights, which an int8 pass never reads
            if hasattr(self.task, unused):
                setattr(self.task, unused, None)
        gc.collect()
        self.env["quantized_engine"] = torch.backends.quantized.engine

    @property
    def generates(self) -> bool:
        return self._generate is not None

    def generate(self, context: int, new_tokens: int) -> dict[str, int]:
        """One timed greedy generation (:meth:`edgebench.backends.torch.tasks.causal_lm.CausalLMSession.generate`),
        at the trial's precision."""
        assert self._generate is not None
        run = at_precision(
            lambda: self._generate(context, new_tokens, self.sync), self.trial.precision, self.trial.device
        )
        return run()  # type: ignore[no-any-return]

    def generation_categorizer(self) -> MemoryCategorizer:
        """Memory by category of one generation (its KV cache a category)."""
        return MemoryCategorizer(
            self.model,
            self.task,
            mode="generate",
            device=self.trial.device,
            batch_size=1,
            runtime_bytes=self.runtime_bytes,
        )

    def train_step(self) -> float | None:
        out = self._train()
        return None if out is None else float(out)

    def infer_step(self) -> None:
        self._infer()

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def to_inference(self) -> None:
        self.model.eval()

    def reset_device_peak_memory(self) -> None:
        if self.cuda:
            torch.cuda.reset_peak_memory_stats()

    def device_peak_memory_bytes(self) -> int | None:
        return torch.cuda.max_memory_allocated() if self.cuda else None

    def memory_categorizer(self) -> MemoryCategorizer:
        """Measures memory by category on the first step it wraps (:mod:`edgebench.backends.torch.memory`)."""
        return MemoryCategorizer(
            self.model,
            self.task,
            mode=self.trial.mode,
            device=self.trial.device,
            batch_size=self.trial.batch_size,
            runtime_bytes=self.runtime_bytes,
            packed_weights=self.quantization is not None,
        )

    def trace_recorder(self, counters: Any = None) -> TraceRecording | None:
        """The trial's tracer; with open perf ``counters`` (``--counters``), layer spans carry their counts."""
        if self.trial.trace == "none":
            return None
        from edgebench.backends.torch.tracing.record import TraceRecorder

        return TraceRecorder(self.trial.trace, self.model, counters).install()


def preload_libraries(trial: Trial) -> None:
    """Import what the trial's model will import (peft, torchao) before the runtime is read, so their resident
    memory counts as ``runtime``, as an app's would, not as ``other``."""
    if trial.finetune == "lora" and trial.lora_impl == "peft":
        from edgebench.zoo.lora import import_peft

        import_peft()
    if trial.frozen_weights == "torchao-int8":
        from edgebench.zoo.lora import quiet_imports

        with quiet_imports():
            import torchao.quantization  # noqa: F401


def open_session(trial: Trial) -> TorchSession:
    return TorchSession(trial)
