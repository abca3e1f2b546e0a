"""How an ``int8`` model was quantized and what it cost in accuracy: the worker reports it in its ``ready`` event
and the result keeps it, so both read this one record (it imports nothing but pydantic and the base record)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from edgebench.records.model import Record


class Quantization(Record):
    """What an ``int8`` trial ran and what it cost in accuracy, against the same model at fp32 on the same inputs.

    Never a speed claim: ``cpu_int8_features`` says whether the CPU has the instructions that make int8 fast
    (VNNI on x86, the dot product on Arm); the trial's own step times say whether it was.
    """

    #: The tool and scheme, e.g. ``onnxruntime.quantization.quantize_static, QDQ, per-channel weights``.
    method: str
    #: ``full``: weights and activations int8 (static); ``weight_only``: int8 weights, float compute; ``dynamic``:
    #: int8 weights, activations quantized at run time from their own range (no calibration; ``int8-dynamic``).
    kind: Literal["full", "weight_only", "dynamic"]
    #: What calibrated the activation ranges: ``mnist: 256 real test images`` or ``synthetic: 64 seeded inputs``.
    calibration: str
    #: Whether the calibration and comparison inputs are real data (then ``*_accuracy`` are filled).
    real_data: bool
    #: How many inputs the fp32 / int8 comparison ran on.
    compared_samples: int
    #: Share of inputs whose top-1 class is the same at int8 as at fp32 (0-1).
    top1_agreement: float | None = None
    #: Held-out accuracy at fp32 and at int8 on those inputs, and the change (int8 - fp32); real data only.
    fp32_accuracy: float | None = None
    int8_accuracy: float | None = None
    accuracy_change: float | None = None
    #: Largest absolute difference of an output value between fp32 and int8.
    max_abs_output_diff: float | None = None
    #: int8 dot-product instructions this CPU has (``avx512_vnni``, ``avx_vnni``, ``asimddp``...); empty: none,
    #: so int8 runs on wider multiply-add sequences and may be no faster than fp32.
    cpu_int8_features: list[str] = Field(default_factory=list)
    notes: list[str] | None = None
