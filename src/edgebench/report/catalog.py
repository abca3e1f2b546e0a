"""What ``edgebench models`` shows: each workload's input, size and FLOPs, and its published figures beside ours.

Sizes and FLOPs are counted on the model definitions themselves by the caller (parameters counted, FLOPs counted
on the meta device: :class:`edgebench.graph.counts.ModelCounter`) and handed in as plain numbers
(:class:`~edgebench.graph.counts.ModelCounts`), so a published figure that a definition fails to reproduce shows as
a deviation instead of being copied into the listing, and the listing itself never builds a model or imports torch.
Without counts (``edgebench models --no-measure``) the listing is the specs alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import ConfigDict

from edgebench.records.model import Record
from edgebench.workloads.spec import Reference, Workload

if TYPE_CHECKING:
    from edgebench.graph.counts import ModelCounts


class PresetInfo(Record):
    model_config = ConfigDict(frozen=True)

    name: str
    input_shape: list[int]
    num_classes: int
    description: str


class ReferenceInfo(Record):
    """A published figure and what this definition measures at the same configuration."""

    model_config = ConfigDict(frozen=True)

    quantity: str
    value: float
    config: str
    source: str
    preset: str
    rel_tol: float
    excludes: list[str]
    measured: float | None
    deviation_pct: float | None
    within_tolerance: bool | None


class ModelInfo(Record):
    model_config = ConfigDict(frozen=True)

    name: str
    domain: str
    description: str
    task: str
    preset: str
    input_shape: list[int]
    num_classes: int
    presets: list[PresetInfo]
    #: Counted on the model; None when the listing does not measure.
    params: int | None
    #: Per sample; a multiply-add counts 2 FLOPs.
    forward_flops: int | None
    forward_macs: int | None
    train_flops_per_sample: int | None
    references: list[ReferenceInfo]
    #: A published model's configuration with random weights (no weights here): every table marks it.
    shape_only: bool = False


def reference_info(workload: Workload, ref: Reference, measured: float | None) -> ReferenceInfo:
    """The published figure ``ref`` of ``workload`` beside ``measured``, the same quantity counted on our definition
    (None: not counted)."""
    deviation = None if measured is None else 100.0 * (measured / ref.value - 1.0)
    return ReferenceInfo(
        quantity=ref.quantity,
        value=ref.value,
        config=ref.config,
        source=ref.source,
        preset=workload.preset(ref.preset).name,
        rel_tol=ref.rel_tol,
        excludes=list(ref.excludes),
        measured=measured,
        deviation_pct=deviation,
        within_tolerance=None if deviation is None else abs(deviation) <= 100.0 * ref.rel_tol + 1e-9,
    )


def describe(workload: Workload, preset_name: str | None = None, counts: ModelCounts | None = None) -> ModelInfo:
    """``workload`` at ``preset_name`` (its default input when None) with the ``counts`` counted there (None: the
    specs alone); ``KeyError`` for an unknown preset."""
    preset = workload.preset(preset_name)
    params = forward = train = None
    measured: tuple[float | None, ...] = (None,) * len(workload.references)
    if counts is not None:
        params, forward, train = counts.params, counts.forward_flops, counts.train_flops_per_sample
        measured = counts.references
    return ModelInfo(
        name=workload.name,
        domain=workload.domain,
        description=workload.description,
        task=workload.task,
        preset=preset.name,
        input_shape=list(preset.input_shape),
        num_classes=preset.num_classes,
        presets=[
            PresetInfo(name=p.name, input_shape=list(p.input_shape), num_classes=p.num_classes,
                       description=p.description)
            for p in workload.presets
        ],
        params=params,
        forward_flops=forward,
        forward_macs=None if forward is None else forward // 2,
        train_flops_per_sample=train,
        references=[reference_info(workload, r, m) for r, m in zip(workload.references, measured, strict=True)],
        shape_only=bool(getattr(workload, "shape_only", False)),
    )  # fmt: skip
