"""A trial's ONNX Runtime session as the worker drives it: the exported model, threads, affinity, the profiler.

The model file and the input batch come from :mod:`.prepare` (a child process, so this worker never imports
torch).  Threads: ``intra_op_num_threads`` = the trial's threads, one inter-op thread, the sequential executor.
Affinity: the worker already pinned the process to the trial's cores (every thread inherits the mask); with more
than one thread, ORT's ``session.intra_op_thread_affinities`` also pins each pool thread to one of those cores in
turn, as ORT does itself when it picks the thread count (the calling thread is the pool's first).  The graph
optimisation level (all: constant folding, node fusions, the NCHWc layout), spinning and the versions are recorded
in ``env``.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.base import TraceRecording
from edgebench.backends.load import timing_load
from edgebench.backends.onnxruntime import INSTALL
from edgebench.records.trial import Trial

#: The level every trial runs at, recorded as ORT names it.
OPTIMIZATION_LEVEL = "ORT_ENABLE_ALL"


def import_onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise RuntimeError(f"the onnxruntime backend needs the onnxruntime package: {INSTALL}") from None
    return onnxruntime


def thread_affinities(cores: tuple[int, ...], threads: int) -> str | None:
    """ORT's ``session.intra_op_thread_affinities`` value: one entry per pool thread beyond the calling one,
    ``;``-separated, each a 1-based logical processor; None for one thread (no pool)."""
    if threads <= 1 or not cores:
        return None
    return ";".join(str(cores[i % len(cores)] + 1) for i in range(1, threads))


def session_options(ort: Any, trial: Trial) -> tuple[Any, dict[str, Any]]:
    """The trial's :class:`onnxruntime.SessionOptions` and what they are, for ``env``."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = trial.threads or 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, OPTIMIZATION_LEVEL)
    options.log_severity_level = 3
    affinities = thread_affinities(trial.cores or (), trial.threads or 1)
    if affinities:
        options.add_session_config_entry("session.intra_op_thread_affinities", affinities)
    env = {
        "onnxruntime": ort.__version__,
        "ort_intra_op_threads": options.intra_op_num_threads,
        "ort_inter_op_threads": options.inter_op_num_threads,
        "ort_execution_mode": "sequential",
        "ort_graph_optimization_level": OPTIMIZATION_LEVEL,
        "ort_thread_affinities": affinities,
        "ort_allow_spinning": True,  # ORT's default: pool threads spin briefly between ops
        "ort_providers": ["CPUExecutionProvider"],
    }
    return options, env


class OrtSession:
    """The exported model in an ``InferenceSession``, its input batch, and the profiler for ``--trace layers``."""

    def __init__(self, trial: Trial) -> None:

        from edgebench.backends.onnxruntime.prepare import run_in_child

        ort = import_onnxruntime()
        self.trial = trial
        self._work = tempfile.TemporaryDirectory(prefix="edgebench-ort-")
        options, self.env = session_options(ort, trial)
        self._profile_dir = Path(self._work.name) / "profile"
        if trial.trace == "layers":
            self._profile_dir.mkdir()
            options.enable_profiling = True
            options.profile_file_prefix = str(self._profile_dir / "ort")
        self.outputs: list[str] | None = None
        if trial.model_file is not None:  # the user's file: no export, nothing of torch (see model_file.py)
            self._open_file(ort, trial, options)
            return
        prepared = run_in_child(trial, Path(self._work.name))
        exported = prepared.exported
        with timing_load("onnxruntime: InferenceSession creation from the model file (graph optimized)") as load:
            self.session = ort.InferenceSession(prepared.model_path, options, providers=["CPUExecutionProvider"])
        self.model_load = load.record
        self.inputs = {exported.input_name: np.load(prepared.inputs_path)}
        self.modules, self.root_class = exported.modules, exported.root_class
        self.model_path = prepared.model_path
        self.params = exported.params
        self.input_shape = exported.input_shape
        self.num_classes: int | None = exported.num_classes
        self.env.update(
            onnx_opset=exported.opset,
            onnx_exporter=exported.exporter,
            onnx_model=Path(prepared.model_path).name,
        )
        self.evaluate = None
        self.quantization = prepared.quantization

    def _open_file(self, ort: Any, trial: Trial, options: Any) -> None:

        from edgebench.backends import model_file as mf
        from edgebench.graph.scopes import scope_tree

        path = trial.model_file or ""
        if not Path(path).is_file():
            raise RuntimeError(f"model file {path} is not on this device")
        info = mf.inspect(path)
        feeds, _ = mf.resolve_feeds(
            info, batch_size=trial.batch_size, input_name=trial.input_name, input_shape=trial.input_shape
        )
        with timing_load("onnxruntime: InferenceSession creation from the user's model file") as load:
            self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self.model_load = load.record
        self.inputs = mf.random_inputs(feeds, trial.seed)
        self.outputs = [trial.output_name] if trial.output_name else None
        self.model_path = path
        self.params = info.params or 0
        shaped = next(f for f in feeds if f.name == (trial.input_name or feeds[0].name))
        self.input_shape = shaped.dims[1:]
        self.num_classes = None
        tree = scope_tree([n.name for n in info.nodes], Path(path).stem)
        self.modules = dict(zip(tree["names"][1:], tree["types"][1:], strict=True))
        self.root_class = tree["names"][0]
        self.env.update(
            model_file=path,
            model_file_io=mf.describe(info),
            model_file_feeds={f.name: list(f.dims) for f in feeds},
            model_file_inputs="random, from the trial's seed (a model file brings no data)",
        )
        self.evaluate = None
        self.quantization = None

    def train_step(self) -> float | None:
        raise RuntimeError("the onnxruntime backend runs inference only")  # Trial refuses --mode train first

    def infer_step(self) -> None:
        self.session.run(self.outputs, self.inputs)

    def sync(self) -> None:
        """``run`` returns when the outputs are computed (CPU provider): nothing is queued."""

    def to_inference(self) -> None:
        """The exported graph is already the eval-mode model (batch norm folded, dropout removed)."""

    def reset_device_peak_memory(self) -> None:
        pass

    def device_peak_memory_bytes(self) -> int | None:
        return None

    def trace_recorder(self) -> TraceRecording | None:
        if self.trial.trace == "none":
            return None
        from edgebench.backends.onnxruntime.profile import ProfileRecorder

        return ProfileRecorder(self, threading.get_native_id())


def open_session(trial: Trial) -> OrtSession:
    return OrtSession(trial)
