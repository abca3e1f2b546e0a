"""A built-in workload's layer graph (what ``edgebench partition`` cuts), kept between commands.

Recording it builds the model and its optimizer and runs a training step under hooks: about 3 s of a partition
command here (importing torch, then torch._dynamo, which any optimizer's construction imports), every time, for
a graph that changes only with the model code, torch, the batch, the input and the precision.  It is kept in
``$EDGEBENCH_CACHE_DIR/graphs`` (:mod:`edgebench.graph.cache`), keyed by all of those; a user's own
``module:factory`` model is recorded every time.  Imports no torch unless it records.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from edgebench.graph import cache
from edgebench.graph.cache import cacheable, fingerprint
from edgebench.graph.export import resolve_input
from edgebench.graph.layer_graph import LayerGraph
from edgebench.host.files import read_sealed, write_sealed

if TYPE_CHECKING:
    from edgebench.records.result import TrialResult


def cached_workload_graph(
    model_name: str,
    batch_size: int,
    *,
    preset: str | None = None,
    input_shape: tuple[int, ...] | None = None,
    num_classes: int | None = None,
    precision: str = "fp32",
    seed: int = 0,
    cache_dir: Path | None = None,
) -> LayerGraph:
    """:func:`edgebench.graph.torch_graph.workload_graph`, read from the cache when an equal one was recorded."""
    from edgebench.workloads import get_workload

    workload = get_workload(model_name)
    path = None
    if cacheable(workload):
        shape, classes = resolve_input(workload.name, input_shape, num_classes, preset)
        key = {"model": workload.name, "batch_size": batch_size, "input_shape": list(shape), "num_classes": classes,
               "precision": precision, "seed": seed, "code": fingerprint()}  # fmt: skip
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
        path = (cache_dir or cache.cache_dir("graphs")) / f"{workload.name}-b{batch_size}-{precision}-{digest}.json"
        sealed = read_sealed(path, digest)  # none yet, torn, stale or edited: record it again
        if sealed is not None:
            with contextlib.suppress(ValueError, KeyError, TypeError):  # nor a graph that is no graph
                return LayerGraph.from_json(sealed["graph"])
    from edgebench.graph.torch_graph import workload_graph

    graph = workload_graph(model_name, batch_size, preset=preset, input_shape=input_shape, num_classes=num_classes,
                           precision=precision, seed=seed)  # fmt: skip
    if path is not None:
        with contextlib.suppress(OSError):  # a cache that cannot be written costs the next command its speed only
            path.parent.mkdir(parents=True, exist_ok=True)
            write_sealed(path, {"graph": graph.to_json()}, digest)
    return graph


def trial_graph(result: TrialResult) -> LayerGraph:
    """The graph of the built-in workload a trial ran, at the trial's batch, input and precision."""
    trial, workload = result.trial, result.workload
    return cached_workload_graph(
        trial.model,
        trial.batch_size,
        preset=trial.preset,
        input_shape=tuple(workload.input_shape) if workload.input_shape else None,
        num_classes=workload.num_classes,
        precision=trial.precision,
    )
