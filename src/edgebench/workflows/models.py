"""The model zoo as a listing: every workload (or those named) with its input, parameters, forward and training
FLOPs counted on the model's definition by the graph's counter (cached, so the next listing builds none; the report
is handed the counts and never builds a model), its published figures beside ours, and which models the MNN backend
accepts in each mode."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from edgebench.errors import UsageError

if TYPE_CHECKING:
    from edgebench.report.catalog import ModelInfo


@dataclass(frozen=True)
class Listing:
    """Each workload described, per model the reason MNN refuses it in ``train`` and ``infer`` (None: accepted), and
    where that answer comes from (the installed MNN asked, or a recorded probe)."""

    models: list[ModelInfo]
    mnn: dict[str, dict[str, str | None]]
    mnn_source: str


def describe_models(
    names: Sequence[str] = (), *, preset: str | None = None, flops: bool = True, measure: bool = True
) -> Listing:
    """Describe the workloads named (names, aliases or ``module:factory``; none: all) at ``preset`` where they have
    it; ``measure=False`` lists the specs alone, without torch, ``flops=False`` skips the FLOP count."""
    from edgebench.backends.mnn.support import mnn_support, record_source
    from edgebench.graph.counts import CountCache, ModelCounter
    from edgebench.registry import MODELS, UnknownName
    from edgebench.report.catalog import describe
    from edgebench.workloads import named_workload

    try:
        workloads = [named_workload(n) for n in (names or MODELS.names())]  # names the user typed
    except (UnknownName, ValueError) as exc:  # an unknown name, or a module:factory that does not import
        raise UsageError("NAMES", str(exc)) from None
    if preset is not None and names and not any(preset in w.preset_names() for w in workloads):
        raise UsageError("--preset", f"none of these workloads has a preset {preset!r}")
    counter = ModelCounter(flops=flops, measure=measure, counts=CountCache() if measure else None)
    chosen = [(w, preset if preset in w.preset_names() else None) for w in workloads]
    infos = [describe(w, p, counter.count(w, p)) for w, p in chosen]
    counter.save()  # the next listing reads them instead of building every model again
    return Listing(infos, mnn_support([i.name for i in infos]), record_source())
