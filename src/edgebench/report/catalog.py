"""What ``edgebench models`` shows: each workload's input, size and FLOPs, and its published figures beside ours.

Sizes and FLOPs are measured on the torch backend's model definitions themselves (parameters counted, FLOPs
counted on the meta device by :mod:`edgebench.backends.torch.flops`), so a published figure that a definition fails
to reproduce shows as a deviation instead of being copied into the listing.  Without measuring
(``Catalog(measure=False)``, ``edgebench models --no-measure``) the listing is the specs alone and imports no torch.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import ConfigDict

from edgebench.backends.torch.fingerprint import cacheable
from edgebench.records.model import Record
from edgebench.report.counts_cache import CountCache
from edgebench.workloads.spec import Preset, Reference, Workload


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


class Catalog:
    """Measures workloads once per (workload, preset); meant to live for one listing, not as a global cache."""

    def __init__(self, flops: bool = True, measure: bool = True, counts: CountCache | None = None) -> None:
        self.measure = measure
        self.flops = flops and measure
        #: Counts kept between listings (``edgebench models``); None counts afresh every time.
        self.counts = counts
        self._params = cache(self._count_params)
        self._flop_counts = cache(self._count_flops)

    def _cached(self, workload: Workload, key: str, count: Callable[[], Any]) -> Any:
        if self.counts is None or not cacheable(workload):
            return count()
        key = f"{workload.name}|{key}"
        value = self.counts.get(key)
        if value is None:
            value = count()
            self.counts.put(key, value)
        return value

    def _count_params(self, workload: Workload, preset: Preset, excludes: tuple[str, ...] = ()) -> int:
        def count() -> int:
            from edgebench.backends.torch.params import count_params  # torch, only when not cached

            return count_params(workload, preset.num_classes, preset.input_shape, excludes)

        return self._cached(workload, f"params|{preset.input_shape}|{preset.num_classes}|{','.join(excludes)}", count)

    def _count_flops(self, workload: Workload, preset: Preset) -> tuple[int, int]:
        def count() -> list[int]:
            from edgebench.backends.torch.flops import count_flops

            counted = count_flops(workload, input_shape=preset.input_shape, num_classes=preset.num_classes)
            return [counted.forward_flops, counted.train_flops]

        forward, train = self._cached(workload, f"flops|{preset.input_shape}|{preset.num_classes}", count)
        return forward, train

    def reference(self, workload: Workload, ref: Reference) -> ReferenceInfo:
        preset = workload.preset(ref.preset)
        measured: float | None = None
        if ref.quantity == "params" and self.measure:
            measured = self._params(workload, preset, ref.excludes)
        elif ref.quantity != "params" and self.flops:
            forward, _ = self._flop_counts(workload, preset)
            measured = forward / 2 if ref.quantity == "forward_macs" else forward
        deviation = None if measured is None else 100.0 * (measured / ref.value - 1.0)
        return ReferenceInfo(
            quantity=ref.quantity,
            value=ref.value,
            config=ref.config,
            source=ref.source,
            preset=preset.name,
            rel_tol=ref.rel_tol,
            excludes=list(ref.excludes),
            measured=measured,
            deviation_pct=deviation,
            within_tolerance=None if deviation is None else abs(deviation) <= 100.0 * ref.rel_tol + 1e-9,
        )

    def describe(self, workload: Workload, preset_name: str | None = None) -> ModelInfo:
        """``workload`` at ``preset_name`` (its default input when None); ``KeyError`` for an unknown preset."""
        preset = workload.preset(preset_name)
        forward = train = None
        if self.flops:
            forward, train = self._flop_counts(workload, preset)
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
            params=self._params(workload, preset) if self.measure else None,
            forward_flops=forward,
            forward_macs=None if forward is None else forward // 2,
            train_flops_per_sample=train,
            references=[self.reference(workload, r) for r in workload.references],
        )  # fmt: skip
