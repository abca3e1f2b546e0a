"""DNNTune's partition findings checked with edgebench's own analyzer (:mod:`edgebench.partition`) on a stored
layer-traced inference trial of this device.

The device's per-layer times are measured; the server's are the device's divided by the analyzer's default
speed-up and the links are the published profiles (Neurosurgeon's bandwidths, Huang et al.'s radio power), so the
verdict is about this device's layers under those stated links, and says so.  Energy-first needs the device's
measured power: without a sensor it cannot be checked (the utilization estimate never decides).

The interval: the best point of one network is priced on another and compared with that network's own best; the
device part of both costs is uncertain by the traced steps' 95% interval of the mean step time (relative), which
bounds the difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from edgebench.records.result import TrialResult
from edgebench.study.stats import Interval

NETWORKS = ("3g", "lte", "wifi")
METHOD = "difference of two split points' costs, bounded by the traced steps' relative 95% interval of the mean"
CLOUD_SPEEDUP = 10.0


def traced(results: Sequence[TrialResult]) -> TrialResult | None:
    """The newest ok layer-traced inference trial among ``results``."""
    found = [r for r in results if r.ok and r.trace_summary is not None and r.trace_summary.granularity == "layers"
             and r.trial.mode == "infer"]  # fmt: skip
    return found[-1] if found else None


def analyses(result: TrialResult, store: Any, objective: str) -> dict[str, Any]:
    """The analyzer's answer on each network for ``objective`` (``latency`` or ``energy``)."""
    from edgebench.graph.graph_cache import trial_graph
    from edgebench.measure.layers import layer_report
    from edgebench.partition.analysis import analyze
    from edgebench.partition.costs import build_table
    from edgebench.partition.network import DEFAULT_NETWORKS
    from edgebench.store.trials import StoredTrial, finished_of, power_series

    stored = StoredTrial.of(finished_of(store, result))
    assert stored.spans is not None
    report = layer_report(result, stored.spans, stored.events, stored.samples, power=power_series(stored, None))
    graph = trial_graph(result)
    table = build_table(graph, "infer", (result, report), cloud_speedup=CLOUD_SPEEDUP)
    if objective == "energy" and table.energy_source is None:
        return {}
    return {n: analyze(table, DEFAULT_NETWORKS[n], objective) for n in NETWORKS}  # type: ignore[arg-type]


def step_noise(result: TrialResult) -> tuple[float, int]:
    """The traced steps' 95% interval of the mean step time relative to the mean, and their count."""
    step = result.latency.step_ms or result.latency.infer_ms
    if step is None:
        return 0.0, 0
    return (step.ci95 / step.mean if step.ci95 and step.mean else 0.0), step.n


def bounded(difference: float, device_part: float, result: TrialResult) -> Interval:
    """``difference`` of two points' costs, uncertain by the device part of both at the steps' relative noise."""
    rel, n = step_noise(result)
    half = rel * device_part
    return Interval(difference, difference - half, difference + half, n, METHOD)


def switching_cost(found: dict[str, Any], result: TrialResult, objective: str) -> tuple[Interval, str] | None:
    """The largest cost, over pairs of networks, of using one network's best point on another, with its interval;
    None when every network picks the same point (then the interval of the nearest rival is not needed: the
    choice does not depend on the network)."""
    best = None
    for a in NETWORKS:
        for b in NETWORKS:
            pa, pb = found[a].best, found[b].best
            if a == b or pa.point == pb.point:
                continue
            row = next(r for r in found[b].rows if r.point == pa.point)
            mine, theirs = pb.value(objective), row.value(objective)
            if mine is None or theirs is None:
                continue
            if objective == "latency":
                device = row.mobile_ms + pb.mobile_ms
            else:
                device = (row.mobile_energy_j or 0.0) + (pb.mobile_energy_j or 0.0)
            interval = bounded(theirs - mine, device, result)
            cand = (interval, f"{a}'s best ({pa.layer}) on {b} against {b}'s ({pb.layer})")
            if best is None or cand[0].estimate > best[0].estimate:
                best = cand
    return best
