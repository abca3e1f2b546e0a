"""Everything an MNN trial needs before it is timed, made in a child process (:mod:`edgebench.backends.prepare_child`)
so that the worker measuring MNN never imports torch.

The torch classification task at the trial's seed supplies the model definition, its initial weights and the
batch (synthetic, or the real digits with ``--data mnist``), exactly as a torch trial of the same settings.  The
child exports it to ONNX, converts it to MNN (for training, for inference, int8), checks that MNN's trainable
tensors are the PyTorch parameters (:func:`edgebench.backends.mnn.model.converter_biases`), builds the int8
accuracy record, and writes what the worker's steps use as ``.npy`` files: the batch and its labels, the real data
where the trial has it, and the data sampler's epoch orders (:mod:`.batches`), so the MNN trial draws the same
batch at every step as the torch one.  The torch module tree (names, types, parents) goes along for the layer
trace.  The worker runs ``python -m edgebench.backends.mnn.prepare TRIAL_JSON OUT_JSON`` and loads the files with
numpy and MNN only.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.backends.mnn.support import unsupported
from edgebench.backends.prepare_child import steps_drawn
from edgebench.records.trial import Trial
from edgebench.workloads import get_workload
from edgebench.workloads.spec import Workload

#: Epoch orders written when the trial's steps are unbounded (``--until-accuracy`` without ``--max-steps``).
UNBOUNDED_EPOCHS = 100


@dataclass(frozen=True)
class Prepared:
    """What the worker loads (paths in the child's folder) and what the child found (counts, records)."""

    #: The MNN model the trial runs: ``train.mnn`` (``--forTraining``) or ``infer.mnn`` (int8 where asked).
    model_path: str
    inputs_path: str
    targets_path: str
    #: ``train_x, train_y, test_x, test_y`` of the real data; None for a synthetic batch.
    data_paths: list[str] | None
    #: The data sampler's epoch orders, ``(epochs, samples)`` int32; None without real data.
    orders_path: str | None
    input_shape: list[int]
    num_classes: int
    torch_params: int
    #: ONNX initializers that are PyTorch parameters (made trainable in MNN).
    param_inits: list[str]
    #: Indices of MNN's trainable tensors that are zero biases the converter added (fixed as constants again).
    converter_biases: list[int]
    ops_rewritten: dict[str, int] | None
    #: The torch model's module labels for the layer trace: ``names``, ``types``, ``parents``, ``qualified``.
    module_tree: dict[str, list[Any]]
    quantization: dict[str, Any] | None
    exporter: str


def torch_task(trial: Trial) -> tuple[Workload, int, Any]:
    """The workload, its classes and its torch classification session at the trial's settings (model, weights,
    batch)."""
    import torch

    torch.set_num_threads(trial.threads or 1)
    workload = get_workload(trial.model)
    reason = unsupported(workload, trial.mode)
    if reason:
        raise ValueError(reason)
    from edgebench.backends.torch.tasks import trial_task

    num_classes, task = trial_task(trial, workload)
    return workload, num_classes, task


def epoch_orders(sampler: Any, steps: int | None) -> np.ndarray:
    """The torch sampler's epoch orders, enough for ``steps`` draws (:data:`UNBOUNDED_EPOCHS` when None).

    :class:`edgebench.backends.torch.data.batches.EpochSampler` holds the first epoch's order and draws each next
    one with ``torch.randperm`` on its generator when an epoch runs out; the same draws are made here, in order.
    """
    import torch

    per_epoch = sampler.n // sampler.batch_size
    epochs = UNBOUNDED_EPOCHS if steps is None else max(1, math.ceil(steps / per_epoch))
    orders = [sampler._order] + [torch.randperm(sampler.n, generator=sampler.generator) for _ in range(epochs - 1)]
    return torch.stack(orders).numpy().astype(np.int32)


def module_tree(model: Any) -> dict[str, list[Any]]:
    """The torch model's module labels, as :class:`edgebench.backends.mnn.trace.InferenceTraceRecorder` uses them."""
    from edgebench.graph.modules import module_labels

    _, names, types, parents = module_labels(model)
    qualified = [name for name, _ in model.named_modules() if name]
    return {"names": names, "types": types, "parents": parents, "qualified": qualified}


def prepare(trial: Trial, work_dir: Path) -> Prepared:
    """Export, convert, check and write the trial's files into ``work_dir``."""
    from edgebench.backends.mnn import runtime
    from edgebench.backends.mnn.convert import convert
    from edgebench.backends.mnn.model import converter_biases, differentiable_ops
    from edgebench.graph.export import export_module

    _, num_classes, task = torch_task(trial)
    input_shape = [int(d) for d in (getattr(task, "input_shape", None) or task.inputs.shape[1:])]
    torch_params = {n: p.detach().cpu().numpy() for n, p in task.model.named_parameters()}
    inputs = task.inputs.cpu().numpy().astype(np.float32)
    paths = {name: work_dir / f"{name}.npy" for name in ("inputs", "targets")}
    np.save(paths["inputs"], inputs)
    np.save(paths["targets"], task.targets.cpu().numpy().astype(np.int32))
    train = trial.mode == "train"
    data_paths = orders_path = None
    if task.data is not None and train:  # an inference trial's batch is the data's first (``inputs``)
        data_paths = []
        for name, array in zip(("train_x", "train_y", "test_x", "test_y"), task.data, strict=True):
            np.save(work_dir / f"{name}.npy", array.cpu().numpy())
            data_paths.append(str(work_dir / f"{name}.npy"))
        if task.sampler is not None:
            orders_path = str(work_dir / "orders.npy")
            np.save(orders_path, epoch_orders(task.sampler, steps_drawn(trial)))
    onnx_path = work_dir / "model.onnx"
    exported = export_module(task.model, task.inputs, onnx_path, training=train)
    param_inits = sorted(exported["parameter_initializers"])
    ops_rewritten, biases, quantization = None, [], None
    mnn, _ = runtime.load()
    if train:
        ops_rewritten = differentiable_ops(onnx_path)
        model_path = convert(onnx_path, work_dir / "train.mnn", for_training=True).mnn_path
        biases = converter_biases(mnn, model_path, torch_params, set(param_inits))
    elif trial.precision == "int8":
        from edgebench.backends.mnn.quantize import int8_model

        model_path, quantization = int8_model(mnn, onnx_path, work_dir, trial, tuple(input_shape), inputs)
    else:
        model_path = convert(onnx_path, work_dir / "infer.mnn", for_training=False).mnn_path
    return Prepared(
        model_path=str(model_path),
        inputs_path=str(paths["inputs"]),
        targets_path=str(paths["targets"]),
        data_paths=data_paths,
        orders_path=orders_path,
        input_shape=input_shape,
        num_classes=int(num_classes),
        torch_params=sum(v.size for v in torch_params.values()),
        param_inits=param_inits,
        converter_biases=biases,
        ops_rewritten=ops_rewritten,
        module_tree=module_tree(task.model),
        quantization=quantization,
        exporter=exported["exporter"],
    )


def run_in_child(trial: Trial, work_dir: Path) -> Prepared:
    """:func:`prepare` in a fresh interpreter (see the module's docstring); its failure is raised here, one line."""
    from edgebench.backends.prepare_child import run_in_child as run_child

    return Prepared(**run_child("edgebench.backends.mnn.prepare", trial, work_dir, "the MNN model"))


if __name__ == "__main__":
    from edgebench.backends.mnn.quiet import stdout_to_stderr
    from edgebench.backends.prepare_child import child_main

    with stdout_to_stderr():  # MNN's and the converter's prints; the child's stdout carries nothing
        code = child_main(prepare, sys.argv[1:])
    raise SystemExit(code)
