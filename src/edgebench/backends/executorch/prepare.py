"""Everything an ExecuTorch trial needs before it is timed, made in a child process
(:mod:`edgebench.backends.prepare_child`): the lowered program (cached, :mod:`.lower`), the batch, the data and the
accuracy record of a low precision.

Why a child: lowering imports ExecuTorch's exporter (``executorch.exir``, ~2,900 modules and seconds of import), and
the worker must neither pay that in its memory figures nor lower in the process that runs the program (see
:mod:`.runtime` on the threadpool).  The torch classification task at the trial's seed supplies the model, its
initial weights and the batch (synthetic, or the real digits with ``--data mnist``), as for a torch trial of the same
settings; the worker runs ``python -m edgebench.backends.executorch.prepare TRIAL_JSON OUT_JSON`` and loads the
files with the runtime and numpy.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.executorch import KERNELS
from edgebench.backends.executorch.lower import Lowered, cached, cached_accuracy, lower_inference, lower_training
from edgebench.records.trial import Trial


@dataclass(frozen=True)
class Prepared:
    """What the worker loads (paths) and what the child found (shapes, counts, records)."""

    program: dict[str, Any]
    #: A training trial's inference program (its inference passes), lowered from the same initial weights.
    infer_program: dict[str, Any] | None
    inputs_path: str
    targets_path: str
    #: ``train_x, train_y, test_x, test_y`` of the real data; None for a synthetic batch.
    data_paths: list[str] | None
    #: The data sampler's epoch orders, ``(epochs, samples)`` int32; None without real data.
    orders_path: str | None
    input_shape: list[int]
    num_classes: int
    params: int
    #: The torch model's module labels for the layer trace: ``names``, ``types``, ``parents``.
    module_tree: dict[str, list[Any]]
    quantization: dict[str, Any] | None
    #: ``nn.Dropout`` modules whose masks the runtime draws (a training program): they differ from torch's.
    dropout: list[str]

    @property
    def lowered(self) -> Lowered:
        return Lowered.from_json(self.program)


def torch_task(trial: Trial) -> tuple[Any, int, Any]:
    """The workload, its classes and its torch classification session at the trial's settings."""
    import torch

    from edgebench.workloads import get_workload

    torch.set_num_threads(1)
    workload = get_workload(trial.model)
    from edgebench.backends.torch.tasks import trial_task

    num_classes, task = trial_task(trial, workload)
    return workload, num_classes, task


def module_tree(model: Any) -> dict[str, list[Any]]:
    from edgebench.graph.modules import module_labels

    _, names, types, parents = module_labels(model)
    return {"names": names, "types": types, "parents": parents}


def _key(trial: Trial, shape: list[int], classes: int, **more: Any) -> dict[str, Any]:
    return {"model": trial.model, "batch_size": trial.batch_size, "input_shape": shape, "num_classes": classes,
            "seed": trial.seed, **more}  # fmt: skip


def _stem(trial: Trial, shape: list[int], what: str) -> str:
    return f"{trial.model}-b{trial.batch_size}-{'x'.join(map(str, shape))}-{what}"


def inference_program(trial: Trial, task: Any, shape: list[int], classes: int, kernels: str) -> tuple[Lowered, Any]:
    """The inference program at the trial's precision (cached) and, at fp16 / int8, its accuracy record."""
    from edgebench.backends.quantize import calibration

    precision = trial.precision
    calib = None
    if precision in ("fp16", "int8"):
        calib = calibration(trial.model, tuple(shape), preset=trial.preset, data=trial.data, seed=trial.seed)
    key = _key(trial, shape, classes, mode="infer", kernels=kernels, precision=precision)
    if calib is not None and precision == "int8":
        import hashlib

        key["calibration"] = hashlib.sha256(calib.calibrate.tobytes()).hexdigest()[:12]

    def build(path: Path) -> Lowered:
        from edgebench.backends.quantize import batches

        batch_list = batches(calib.calibrate, trial.batch_size) if calib is not None else None
        return lower_inference(_copy(task.model), task.inputs, path, kernels=kernels, precision=precision,
                               calibration=batch_list)  # fmt: skip

    lowered = cached(key, _stem(trial, shape, f"infer-{kernels}-{precision}"), build)
    if calib is None:
        return lowered, None
    labels = b"" if calib.labels is None else calib.labels.tobytes()
    inputs = [calib.compare.tobytes(), labels, str(trial.batch_size).encode()]
    record = cached_accuracy(lowered, inputs, lambda: accuracy_record(lowered, task.model, calib, trial.batch_size))
    return lowered, record


def _copy(model: Any) -> Any:
    import copy

    return copy.deepcopy(model)


def accuracy_record(lowered: Lowered, model: Any, calib: Any, batch_size: int) -> dict[str, Any]:
    """The low-precision program against the PyTorch model at fp32 on the same inputs
    (:func:`edgebench.backends.quantize.compare_run`): ExecuTorch's fp32 program matches torch to ~1e-7, so the
    difference is the precision's."""
    import torch
    from executorch.extension.pybindings import _C

    from edgebench.backends.executorch.runtime import quiet
    from edgebench.backends.quantize import compare_run, quantization_record

    program_bytes = Path(lowered.path).read_bytes()  # kept alive for the method's life
    with quiet():
        method = _C._load_program_from_buffer(program_bytes).load_method("forward")
    model = model.eval()
    half = lowered.precision == "fp16"

    def low(batch: np.ndarray) -> np.ndarray:
        x = torch.from_numpy(batch)
        with quiet():
            out = method.call((x.half() if half else x,))[0]
        return out.float().numpy()

    def reference(batch: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return model(torch.from_numpy(batch)).numpy()

    comparison = compare_run(calib, batch_size, reference, low)
    where = "XNNPACK" if lowered.kernels == "xnnpack" else "the portable kernels"
    if half:
        method_text = f"fp16: the model's weights and activations in half precision (module.half()) on {where}"
        return quantization_record(method_text, calib, comparison, notes=[
            "fp16 is compared with the PyTorch model at fp32 on the same inputs (no calibration: the inputs are "
            "only compared)"])  # fmt: skip
    version = _version()
    method_text = (
        f"ExecuTorch {version} XNNPACKQuantizer (torchao PT2E prepare/convert): symmetric, per-channel int8 "
        "weights, static int8 activations, on XNNPACK; compared with the PyTorch model at fp32"
    )
    return quantization_record(method_text, calib, comparison)


def _version() -> str:
    from edgebench.backends.executorch.runtime import version

    return version()


def training_program(trial: Trial, task: Any, shape: list[int], classes: int) -> Lowered:
    key = _key(trial, shape, classes, mode="train", kernels="portable", precision="fp32")

    def build(path: Path) -> Lowered:
        return lower_training(_copy(task.model), task.inputs, task.targets, path)

    return cached(key, _stem(trial, shape, "train-portable"), build)


def prepare(trial: Trial, work_dir: Path) -> Prepared:
    """Lower (cached) and write the trial's files into ``work_dir``."""
    from edgebench.backends.executorch.support import unsupported

    workload, num_classes, task = torch_task(trial)
    reason = unsupported(workload, trial.mode)
    if reason:
        raise ValueError(reason)
    shape = [int(d) for d in (getattr(task, "input_shape", None) or task.inputs.shape[1:])]
    kernels = KERNELS[trial.backend]
    train = trial.mode == "train"
    inputs = task.inputs.detach().cpu().numpy()
    paths = {name: work_dir / f"{name}.npy" for name in ("inputs", "targets")}
    np.save(paths["inputs"], inputs.astype(np.float16 if trial.precision == "fp16" else np.float32))
    np.save(paths["targets"], task.targets.cpu().numpy().astype(np.int64))
    data_paths = orders_path = None
    if task.data is not None and train:
        from edgebench.backends.mnn.prepare import epoch_orders
        from edgebench.backends.prepare_child import steps_drawn

        data_paths = []
        for name, array in zip(("train_x", "train_y", "test_x", "test_y"), task.data, strict=True):
            np.save(work_dir / f"{name}.npy", array.cpu().numpy())
            data_paths.append(str(work_dir / f"{name}.npy"))
        if task.sampler is not None:
            orders_path = str(work_dir / "orders.npy")
            np.save(orders_path, epoch_orders(task.sampler, steps_drawn(trial)))
    quantization = infer_program = None
    if train:
        program = training_program(trial, task, shape, int(num_classes))
        if trial.infer_steps:
            infer_program = asdict(inference_program(trial, task, shape, int(num_classes), kernels)[0])
    else:
        program, quantization = inference_program(trial, task, shape, int(num_classes), kernels)
    dropout = [n for n, m in task.model.named_modules() if type(m).__name__.startswith("Dropout") and m.p > 0]
    return Prepared(
        program=asdict(program),
        infer_program=infer_program,
        inputs_path=str(paths["inputs"]),
        targets_path=str(paths["targets"]),
        data_paths=data_paths,
        orders_path=orders_path,
        input_shape=shape,
        num_classes=int(num_classes),
        params=sum(p.numel() for p in task.model.parameters()),
        module_tree=module_tree(task.model),
        quantization=quantization,
        dropout=dropout if train else [],
    )


def run_in_child(trial: Trial, work_dir: Path) -> Prepared:
    """:func:`prepare` in a fresh interpreter (see the module's docstring); its failure is raised here, one line."""
    from edgebench.backends.prepare_child import run_in_child as run_child

    return Prepared(**run_child("edgebench.backends.executorch.prepare", trial, work_dir, "the ExecuTorch program"))


if __name__ == "__main__":
    from edgebench.backends.mnn.quiet import stdout_to_stderr
    from edgebench.backends.prepare_child import child_main

    with stdout_to_stderr():  # the exporter's and partitioner's prints: the child's stdout carries nothing
        code = child_main(prepare, sys.argv[1:])
    raise SystemExit(code)
