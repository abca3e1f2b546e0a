"""A user's model file on MNN: an ``.mnn`` file as it is, an ``.onnx`` file converted first (in a child process).

The conversion is MNN's C++ converter binding (:mod:`.convert`), never the ``mnnconvert`` console script, whose
wrapper installs a logging SDK and posts the machine id (REFERENCE.md section 7); it runs in a child process
(:mod:`edgebench.backends.prepare_child`) so that neither the converter's heap nor its prints reach the worker
that measures MNN, and its stdout goes to stderr.  The layer labels come from the ONNX node names' scopes
(:func:`edgebench.graph.scopes.scope_tree`): MNN names each op after its ONNX node's output
(``/features/features.0/Conv_output_0``), which maps back to the scope; an ``.mnn`` file carries no ONNX graph, so
its ops sit directly under the model.

Inputs are fed through one MNN host tensor each (float32, or int32 for integer inputs: MNN's converter stores
int64 ONNX inputs as int32), resized to the trial's shapes before the session is sized.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.records.trial import Trial


@dataclass(frozen=True)
class FilePrepared:
    model_path: str
    #: ``{name: [dims...]}`` of every input, batch first; dtype per input.
    feeds: dict[str, list[int]]
    dtypes: dict[str, str]
    #: The layer labels (``names``, ``types``, ``parents``, ``qualified``).
    module_tree: dict[str, list[Any]]
    params: int | None
    converted: bool


def prepare(trial: Trial, work_dir: Path) -> FilePrepared:
    """Convert the trial's ONNX file to MNN (an ``.mnn`` file is used as it is) and resolve its input shapes."""
    from edgebench.backends import model_file as mf
    from edgebench.graph.scopes import scope_tree

    path = trial.model_file or ""
    if not Path(path).is_file():
        raise RuntimeError(f"model file {path} is not on this device")
    info = mf.inspect(path)
    feeds, _ = mf.resolve_feeds(
        info, batch_size=trial.batch_size, input_name=trial.input_name, input_shape=trial.input_shape
    )
    tree = scope_tree([n.name for n in info.nodes], Path(path).stem)
    model_path, converted = path, False
    if info.format == "onnx":
        from edgebench.backends.mnn.convert import convert

        model_path, converted = str(convert(path, work_dir / "model.mnn", for_training=False).mnn_path), True
    return FilePrepared(
        model_path=model_path,
        feeds={f.name: list(f.dims) for f in feeds},
        dtypes={f.name: f.dtype for f in feeds},
        module_tree=tree,
        params=info.params,
        converted=converted,
    )


def run_in_child(trial: Trial, work_dir: Path) -> FilePrepared:
    from edgebench.backends.prepare_child import run_in_child as run_child

    return FilePrepared(**run_child("edgebench.backends.mnn.model_file", trial, work_dir, "the model file for MNN"))


class FileInterpreter:
    """The file's ``Interpreter`` session with every input resized and fed before each run."""

    def __init__(self, mnn: Any, prepared: FilePrepared, trial: Trial, core_ids: list[int] | None) -> None:
        from edgebench.backends import model_file as mf
        from edgebench.backends.mnn import runtime

        self.mnn = mnn
        self.interpreter = mnn.Interpreter(prepared.model_path)
        if core_ids:
            self.interpreter.setSessionHint(runtime.CPU_CORE_IDS, list(core_ids))
        config = {"backend": "CPU", "numThread": trial.threads or 1,
                  "precision": runtime.SESSION_PRECISION[trial.precision]}  # fmt: skip
        self.session = self.interpreter.createSession(config)
        feeds = [mf.Feed(name, tuple(dims), prepared.dtypes[name]) for name, dims in prepared.feeds.items()]
        self.arrays = mf.random_inputs(feeds, trial.seed)
        self.hosts: dict[str, Any] = {}
        for name, array in self.arrays.items():
            tensor = self.interpreter.getSessionInput(self.session, name)
            self.interpreter.resizeTensor(tensor, tuple(array.shape))
            self.hosts[name] = self._host(array)
        self.interpreter.resizeSession(self.session)

    def _host(self, array: np.ndarray) -> Any:
        mnn = self.mnn
        if np.issubdtype(array.dtype, np.floating):
            data, kind = np.ascontiguousarray(array, dtype=np.float32), mnn.Halide_Type_Float
        else:
            data, kind = np.ascontiguousarray(array, dtype=np.int32), mnn.Halide_Type_Int
        return mnn.Tensor(tuple(array.shape), kind, data, mnn.Tensor_DimensionType_Caffe)

    @property
    def input_bytes(self) -> int:
        return int(sum(a.nbytes for a in self.arrays.values()))

    def run(self, callbacks: tuple[Any, Any] | None = None) -> None:
        """One inference (each input copied in first: MNN reuses an input's memory for intermediate results)."""
        for name, host in self.hosts.items():
            self.interpreter.getSessionInput(self.session, name).copyFrom(host)
        if callbacks is None:
            self.interpreter.runSession(self.session)
        else:
            self.interpreter.runSessionWithCallBackInfo(self.session, *callbacks)


if __name__ == "__main__":
    from edgebench.backends.mnn.quiet import stdout_to_stderr
    from edgebench.backends.prepare_child import child_main

    with stdout_to_stderr():
        code = child_main(prepare, sys.argv[1:])
    raise SystemExit(code)
