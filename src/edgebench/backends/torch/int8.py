"""int8 on PyTorch: post-training static quantization with ``torch.ao.quantization`` (FX graph mode).

FX graph mode quantizes a model without edits to its definition: it traces the model, fuses conv + batch norm
(+ ReLU), inserts observers, runs the calibration inputs and converts to quantized modules.  The quantized engine
is ``x86`` (fbgemm's kernels with oneDNN's for some shapes) where torch offers it, else ``fbgemm`` / ``onednn``,
else ``qnnpack`` (Arm); the engine used is recorded.  Only inference runs quantized, on the CPU.
"""

from __future__ import annotations

import copy
import warnings

import torch
from torch import nn

from edgebench.backends.quantize import Calibration, batches, compare_run, quantization_record

_ENGINES = ("x86", "fbgemm", "onednn", "qnnpack")


def quantized_engine() -> str:
    """The first of :data:`_ENGINES` this torch build supports, made the current engine."""
    supported = torch.backends.quantized.supported_engines
    engine = next((e for e in _ENGINES if e in supported), None)
    if engine is None:
        raise ValueError(f"int8: this torch build has no quantized engine (it offers {supported})")
    torch.backends.quantized.engine = engine
    return engine


def _plain_batch_norm(model: nn.Module) -> nn.Module:
    """A copy whose batch-norm subclasses (:class:`edgebench.zoo.layers.BatchNorm2d`) are plain
    ``nn.BatchNorm2d``: identical in eval mode, and what FX fuses and quantizes (a subclass would be traced into)."""
    model = copy.deepcopy(model).eval()
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d) and type(module) is not nn.BatchNorm2d:
            module.__class__ = nn.BatchNorm2d
    return model


def quantize(model: nn.Module, example: torch.Tensor, calib: Calibration, batch_size: int) -> tuple[nn.Module, dict]:
    """``model`` quantized to int8 (calibrated on ``calib``), and the :class:`Quantization` record comparing it
    with the fp32 model on ``calib.compare``."""
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    engine = quantized_engine()
    fp32 = model.eval()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notice (torchao is its successor)
        prepared = prepare_fx(_plain_batch_norm(fp32), get_default_qconfig_mapping(engine), (example,))
        for batch in batches(calib.calibrate, batch_size):
            prepared(torch.from_numpy(batch))
        quantized = convert_fx(prepared)
    with torch.no_grad():
        comparison = compare_run(
            calib,
            batch_size,
            lambda b: fp32(torch.from_numpy(b)).numpy(),
            lambda b: quantized(torch.from_numpy(b)).numpy(),
        )
    method = (
        f"torch.ao.quantization FX graph mode, static, {engine} engine, default qconfig "
        "(per-channel int8 weights, uint8 activations, conv+bn+relu fused)"
    )
    return quantized, quantization_record(method, calib, comparison)
