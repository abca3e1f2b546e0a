"""Parameter and FLOP counts of the workloads as plain data, kept on disk between ``edgebench models`` listings.

Counting builds every model and traces it (:mod:`.flops`; half a minute for the whole zoo on a laptop core), yet the
counts change only when a model definition, the counting code or torch changes.  :class:`ModelCounter` counts each
(workload, input) once per listing and reads and writes :class:`CountCache`, a file that carries the code's
fingerprint (:func:`edgebench.graph.cache.fingerprint`) and is ignored whole when it differs; a user's own
``module:factory`` model is never cached.  What it hands on is :class:`ModelCounts`, plain numbers, so the listing
(:mod:`edgebench.report.catalog`) shows counts without building a model or importing torch; this module imports
torch only to count what the cache lacks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from edgebench.graph.cache import cacheable, counts_path, fingerprint
from edgebench.host.files import read_sealed, write_sealed
from edgebench.workloads.spec import Preset, Reference, Workload


@dataclass(frozen=True)
class ModelCounts:
    """What was counted of one workload at one input (per sample; a multiply-add counts 2 FLOPs); None: not counted."""

    params: int | None = None
    forward_flops: int | None = None
    train_flops_per_sample: int | None = None
    #: Per published figure of the workload (``workload.references``, in order), the same quantity counted on our
    #: definition at the figure's configuration.
    references: tuple[float | None, ...] = ()


class CountCache:
    """``{key: counts}`` read once and written back when new counts were added; unreadable means empty."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or counts_path()
        self._fingerprint = fingerprint()
        self._counts: dict[str, Any] = {}
        self._dirty = False
        data = read_sealed(self.path, self._fingerprint)  # none, torn, stale or edited: counted again
        if data is not None and isinstance(data.get("counts"), dict):
            self._counts = dict(data["counts"])

    def get(self, key: str) -> Any:
        return self._counts.get(key)

    def put(self, key: str, value: Any) -> None:
        self._counts[key] = value
        self._dirty = True

    def save(self) -> None:
        """Write the counts back; a cache that cannot be written only costs the next listing its speed."""
        if not self._dirty:
            return
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_sealed(self.path, {"counts": self._counts}, self._fingerprint)
            self._dirty = False


class ModelCounter:
    """Counts workloads once per (workload, input); meant to live for one listing, not as a global cache.

    ``measure=False`` counts nothing (and imports no torch); ``flops=False`` counts parameters only.  With
    ``counts`` the counts are read from it and new ones put in it (:meth:`save` writes them back).
    """

    def __init__(self, flops: bool = True, measure: bool = True, counts: CountCache | None = None) -> None:
        self.measure = measure
        self.flops = flops and measure
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
            from edgebench.graph.flops import count_params  # torch, only when not cached

            return count_params(workload, preset.num_classes, preset.input_shape, excludes)

        return self._cached(workload, f"params|{preset.input_shape}|{preset.num_classes}|{','.join(excludes)}", count)

    def _count_flops(self, workload: Workload, preset: Preset) -> tuple[int, int]:
        def count() -> list[int]:
            from edgebench.graph.flops import count_flops

            counted = count_flops(workload, input_shape=preset.input_shape, num_classes=preset.num_classes)
            return [counted.forward_flops, counted.train_flops]

        forward, train = self._cached(workload, f"flops|{preset.input_shape}|{preset.num_classes}", count)
        return forward, train

    def reference(self, workload: Workload, ref: Reference) -> float | None:
        """The quantity of the published figure ``ref`` counted on our definition at its configuration (None: this
        counter does not count it)."""
        preset = workload.preset(ref.preset)
        if ref.quantity == "params":
            return self._params(workload, preset, ref.excludes) if self.measure else None
        if not self.flops:
            return None
        forward, _ = self._flop_counts(workload, preset)
        return forward / 2 if ref.quantity == "forward_macs" else forward

    def count(self, workload: Workload, preset_name: str | None = None) -> ModelCounts:
        """``workload`` at ``preset_name`` (its default input when None); ``KeyError`` for an unknown preset."""
        preset = workload.preset(preset_name)
        forward = train = None
        if self.flops:
            forward, train = self._flop_counts(workload, preset)
        return ModelCounts(
            params=self._params(workload, preset) if self.measure else None,
            forward_flops=forward,
            train_flops_per_sample=train,
            references=tuple(self.reference(workload, r) for r in workload.references),
        )

    def save(self) -> None:
        """Write new counts back to the cache (when there is one): the next listing reads them."""
        if self.counts is not None:
            self.counts.save()
