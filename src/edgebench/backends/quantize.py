"""What every int8 backend shares: the calibration inputs, and the accuracy check against fp32 on the same inputs.

Post-training static quantization needs activation ranges, measured by running inputs through the fp32 model.
They are real where the model's preset names a dataset that ships offline and the model's task takes it (LeNet's
``mnist`` preset: the MNIST digits of :mod:`edgebench.data`), synthetic otherwise (seeded standard-normal inputs,
as the trial's own synthetic batch); :class:`Calibration` says which.  The same inputs are then run at fp32 and at
int8 and compared (:func:`compare`): top-1 agreement always, accuracy where the labels are real.

The weights are the workload's seeded initial weights (every backend's, so they agree), not trained ones: on real
data both accuracies sit near chance, so the top-1 agreement and the output difference are the figures that say
what quantization changed.  Imports torch (to load the digits) only when a worker calls it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Inputs that calibrate the activation ranges, and inputs the fp32 / int8 comparison runs on (disjoint when real).
CALIBRATION_SAMPLES = 64
COMPARE_SAMPLES = 256


@dataclass(frozen=True)
class Calibration:
    """Inputs shaped ``(n, *input_shape)`` as float32, and labels where the data is real."""

    calibrate: np.ndarray
    compare: np.ndarray
    labels: np.ndarray | None
    #: ``mnist: 64 real training images`` / ``synthetic: 64 seeded standard-normal inputs``.
    description: str

    @property
    def real(self) -> bool:
        return self.labels is not None


def real_dataset(model: str, input_shape: tuple[int, ...], preset: str | None, data: str | None) -> str | None:
    """The dataset that calibrates ``model``: the trial's ``data``, else its preset's name where a dataset by that
    name ships and the model's task takes it at this input size; None: synthetic."""
    from edgebench.registry import DATASETS
    from edgebench.workloads import get_workload
    from edgebench.workloads.tasks import task_datasets

    workload = get_workload(model)
    name = data or workload.preset(preset).name
    if name not in DATASETS or DATASETS.canonical(name) not in task_datasets(workload.task):
        return None
    import importlib.util

    dataset = DATASETS.load(name)
    if getattr(dataset, "kind", None) != "images" or math.prod(input_shape) != 28 * 28:
        return None  # the only image set that ships is 28x28 digits
    requires = getattr(dataset, "requires", "")
    if requires and importlib.util.find_spec(requires) is None:
        return None  # the digits ship in the data extra; without it, calibrate on synthetic inputs
    return DATASETS.canonical(name)


def calibration(
    model: str, input_shape: tuple[int, ...], *, preset: str | None, data: str | None, seed: int
) -> Calibration:
    """Calibration and comparison inputs for ``model`` at ``input_shape``: real digits where they fit, else
    synthetic from ``seed`` (the calibration and comparison draws differ)."""
    dataset = real_dataset(model, input_shape, preset, data)
    if dataset is not None:
        from edgebench.registry import DATASETS

        images = DATASETS.load(dataset).load()
        # Evenly spaced over each split, which is stored class by class: every digit is represented.
        pick_train = np.linspace(0, len(images.train_y) - 1, CALIBRATION_SAMPLES).astype(int)
        pick_test = np.linspace(0, len(images.test_y) - 1, min(COMPARE_SAMPLES, len(images.test_y))).astype(int)
        train = images.train_x.numpy()[pick_train].reshape(-1, *input_shape).astype(np.float32)
        test = images.test_x.numpy()[pick_test].reshape(-1, *input_shape).astype(np.float32)
        labels = images.test_y.numpy()[pick_test]
        return Calibration(
            train,
            test,
            labels,
            f"{dataset}: {len(train)} real training images calibrate, {len(test)} held-out images compare",
        )
    rng = np.random.default_rng(seed)
    calibrate = rng.standard_normal((CALIBRATION_SAMPLES, *input_shape), dtype=np.float32)
    compare_inputs = rng.standard_normal((COMPARE_SAMPLES, *input_shape), dtype=np.float32)
    return Calibration(
        calibrate,
        compare_inputs,
        None,
        f"synthetic: {CALIBRATION_SAMPLES} seeded standard-normal inputs calibrate, {COMPARE_SAMPLES} others compare "
        "(no real data ships for this model's input)",
    )


def batches(inputs: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """``inputs`` in whole batches of ``batch_size`` (a model exported at a fixed batch takes no other); the
    remainder is dropped, and at least one batch is made by repeating inputs when there are fewer."""
    index = whole_batches(len(inputs), batch_size)
    return [inputs[index[i : i + batch_size]] for i in range(0, len(index), batch_size)]


def whole_batches(n: int, batch_size: int) -> np.ndarray:
    """Indices of ``n`` inputs filling whole batches: truncated, or repeated when ``n < batch_size``."""
    index = np.arange(n)
    if n < batch_size:
        index = np.resize(index, batch_size)
    return index[: len(index) // batch_size * batch_size]


def compare_run(calib: Calibration, batch_size: int, fp32: Any, int8: Any) -> dict[str, Any]:
    """Run the comparison inputs through ``fp32`` and ``int8`` (each ``batch array -> output array``) and
    :func:`compare` them, with the labels of the inputs actually run."""
    index = whole_batches(len(calib.compare), batch_size)
    outputs = [(fp32(b), int8(b)) for b in batches(calib.compare, batch_size)]
    labels = None if calib.labels is None else calib.labels[index]
    return compare(np.concatenate([o[0] for o in outputs]), np.concatenate([o[1] for o in outputs]), labels)


def compare(fp32: np.ndarray, int8: np.ndarray, labels: np.ndarray | None) -> dict[str, Any]:
    """Top-1 agreement, accuracies and their change (with labels), and the largest output difference."""
    fp32, int8 = fp32.reshape(len(fp32), -1), int8.reshape(len(int8), -1)
    top_fp32, top_int8 = fp32.argmax(axis=1), int8.argmax(axis=1)
    out: dict[str, Any] = {
        "compared_samples": len(fp32),
        "top1_agreement": float((top_fp32 == top_int8).mean()),
        "max_abs_output_diff": float(np.abs(fp32 - int8).max()),
    }
    scale = float(np.abs(fp32).max())
    if scale < 1e-6:
        out["notes"] = [
            f"the fp32 outputs are all ~0 at the initial weights (largest |y| = {scale:.1e}): top-1 agreement "
            "compares rounding noise; the output difference is the figure"
        ]
    if labels is not None:
        out["fp32_accuracy"] = float((top_fp32 == labels).mean())
        out["int8_accuracy"] = float((top_int8 == labels).mean())
        out["accuracy_change"] = out["int8_accuracy"] - out["fp32_accuracy"]
    return out


def quantization_record(
    method: str, calib: Calibration, comparison: dict[str, Any], *, kind: str = "full", notes: list[str] | None = None
) -> dict[str, Any]:
    """A :class:`~edgebench.records.quantization.Quantization` as a dict: prepared models cross a process boundary
    as JSON, and the ``ready`` event validates it back into the record."""
    from edgebench.host.cpu import int8_cpu_features
    from edgebench.host.sysfs import SysFS
    from edgebench.records.quantization import Quantization

    features = int8_cpu_features(SysFS("/"))
    comparison = dict(comparison)
    all_notes = list(notes or []) + comparison.pop("notes", [])
    if not features:
        all_notes.append(
            "this CPU has no int8 dot-product instructions (VNNI, asimddp): int8 kernels use wider multiply-add "
            "sequences, so int8 may be no faster than fp32; the step times say"
        )
    if calib.real:
        all_notes.append("weights are the seeded initial weights, not trained ones: accuracies sit near chance")
    record = Quantization(
        method=method,
        kind=kind,  # type: ignore[arg-type]
        calibration=calib.description,
        real_data=calib.real,
        cpu_int8_features=features,
        notes=all_notes or None,
        **comparison,
    )
    return record.model_dump()
