"""Every partition point's latency and device energy, the best point, and whether a frontier misses the DAG's best.

DNNTune's model: for a point ``p`` (units ``[0, p)`` on the device, the rest on the server)
``T_p = T_mobile + T_transfer + T_cloud`` and ``E_p = E_mobile + E_transfer``: the device's compute energy above
idle plus its radio's, nothing for the time it waits (DNNTune does not count it either).  Point 0 sends the input
(cloud-only), point ``n`` sends nothing (mobile-only).

Inference: the crossing tensors go up, the model's output comes back down, and there is one round trip.
Training (split learning, ``mode="train"``): per step the device runs its forward, sends the crossing activations
and the labels, the server runs forward, loss, backward and its optimizer, the gradients of the crossing
activations come back, and the device runs its backward and optimizer; the steps run one after another.

Ties (equal objective within 1e-9 relative) go to the point with the lower other objective (energy for a latency
objective, latency for an energy one), then to the later point: more of the model stays on the device.

A *frontier* is a prefix of the execution order.  The best cut of a DAG can run a branch on the device and its
sibling on the server, which no prefix does; :func:`dag_best_cut` finds it as a minimum s-t cut (DADS, Hu et al.
INFOCOM 2019) over the same costs, with networkx's max-flow (:func:`_device_side` says which of several minimum cuts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from edgebench.graph.layer_graph import INPUT
from edgebench.partition.costs import CostTable, transfer_bytes
from edgebench.partition.network import NetworkProfile

Objective = Literal["latency", "energy"]
Kind = Literal["cloud-only", "split", "mobile-only", "dag-cut"]

#: A capacity never cut: the device does not wait on the server mid-pass, a tensor sent once serves every reader.
INF = float("inf")
#: Residual capacity up to this (in the capacities' unit) counts as none: cuts whose values differ by less, a rounding
#: error of the costs' float sums, are ties.
_SLACK = 1e-12


@dataclass(frozen=True)
class PointCost:
    """One way of running the model: a frontier point, or a DAG cut that is not one."""

    point: int
    #: The last layer run on the device (``(input)`` for cloud-only).
    layer: str
    kind: Kind
    #: Tensors that cross from the device to the server (2 and more: a cut inside a branch).
    tensors: int
    mobile_ms: float
    up_bytes: int
    down_bytes: int
    transfer_ms: float
    cloud_ms: float
    total_ms: float
    transfer_energy_j: float
    mobile_energy_j: float | None
    total_energy_j: float | None

    def value(self, objective: Objective) -> float | None:
        return self.total_ms if objective == "latency" else self.total_energy_j


def point_cost(
    table: CostTable,
    network: NetworkProfile,
    on_device: Sequence[bool],
    *,
    point: int = -1,
    layer: str = "",
    kind: Kind = "dag-cut",
    transfer_dtype: str | None = None,
) -> PointCost:
    """The cost of any assignment of units to the device (True) or the server (False), frontier or not."""

    def device(i: int) -> bool:
        return i == INPUT or on_device[i]

    mobile_ms = sum(u.mobile_ms for u, d in zip(table.units, on_device, strict=True) if d)
    cloud_ms = sum(u.cloud_ms for u, d in zip(table.units, on_device, strict=True) if not d)
    energies = [u.mobile_energy_j for u, d in zip(table.units, on_device, strict=True) if d]
    mobile_energy = None if any(e is None for e in energies) else float(sum(e for e in energies if e is not None))
    up = down = crossing = 0
    train = table.mode == "train"
    for t in table.tensors:
        size = transfer_bytes(t, transfer_dtype)
        here = device(t.producer)
        if any(device(c) != here for c in t.consumers):
            grad = size if train and t.requires_grad else 0
            if here:  # activation up, its gradient back
                crossing, up, down = crossing + 1, up + size, down + grad
            else:  # only in a cut that is not closed under predecessors
                up, down = up + grad, down + size
        if t.output and not train and not here:
            down += size  # the result comes back to the device
    remote = not all(on_device) and len(table.units) > 0
    if remote and train:
        up += table.label_bytes
    transfer_ms = network.up_ms(up) + network.down_ms(down) + (network.rtt_ms if remote else 0.0)
    transfer_energy = network.up_energy_j(up) + network.down_energy_j(down)
    return PointCost(
        point=point,
        layer=layer,
        kind=kind,
        tensors=crossing,
        mobile_ms=mobile_ms,
        up_bytes=up,
        down_bytes=down,
        transfer_ms=transfer_ms,
        cloud_ms=cloud_ms,
        total_ms=mobile_ms + transfer_ms + cloud_ms,
        transfer_energy_j=transfer_energy,
        mobile_energy_j=mobile_energy,
        total_energy_j=None if mobile_energy is None else mobile_energy + transfer_energy,
    )


def frontier_points(
    table: CostTable,
    network: NetworkProfile,
    *,
    transfer_dtype: str | None = None,
    points: Sequence[int] | None = None,
) -> list[PointCost]:
    """One row per point of the execution order (or per point of ``points``), cloud-only first, mobile-only last."""
    n = len(table.units)
    rows = []
    for p in sorted({0, n, *(points if points is not None else range(n + 1))}):
        kind: Kind = "cloud-only" if p == 0 else "mobile-only" if p == n else "split"
        layer = "(input)" if p == 0 else table.units[p - 1].name
        on_device = [i < p for i in range(n)]
        rows.append(
            point_cost(table, network, on_device, point=p, layer=layer, kind=kind, transfer_dtype=transfer_dtype)
        )
    return rows


def best_point(rows: Sequence[PointCost], objective: Objective) -> PointCost:
    """The row with the lowest objective; ties as the module says.  Energy needs every row's energy."""
    other: Objective = "energy" if objective == "latency" else "latency"
    values = [r.value(objective) for r in rows]
    if any(v is None for v in values):
        raise ValueError("energy cannot be ranked: the device's compute energy is unknown")
    low = min(v for v in values if v is not None)
    tied = [r for r, v in zip(rows, values, strict=True) if v is not None and v <= low + 1e-9 * max(1.0, abs(low))]
    return min(tied, key=lambda r: (r.value(other) if r.value(other) is not None else 0.0, -r.point))


@dataclass(frozen=True)
class DagCut:
    """The minimum s-t cut of the layer DAG and how it compares with the best frontier."""

    cost: PointCost
    #: Units the cut runs on the device.
    on_device: tuple[bool, ...]
    #: True when no frontier reaches the cut's objective (the chain of frontiers misses the DAG's best cut).
    frontier_misses: bool
    #: How much better the DAG's cut is than the best frontier, in the objective's unit (0 when it is not).
    gain: float


def dag_best_cut(
    table: CostTable,
    network: NetworkProfile,
    objective: Objective,
    best_frontier: PointCost,
    *,
    transfer_dtype: str | None = None,
) -> DagCut:
    """DADS's minimum s-t cut over the same costs.

    Source side = device.  Each unit ``v`` has an edge ``s -> v`` costing its server time (cut when it runs on
    the server) and ``v -> t`` costing its device time.  Each tensor gets a node ``x`` with ``producer -> x``
    costing its transfer (and, training, its gradient's return) and ``x -> consumer`` infinite, so a tensor read
    by several server units is sent once.  ``consumer -> producer`` is infinite: the device never waits on the
    server mid-pass.  The round trip (and in training the labels) is a constant for every cut that uses the
    server, so the cut is compared with mobile-only on the exact evaluator afterwards.
    """
    n = len(table.units)
    energy = objective == "energy"
    train = table.mode == "train"
    capacities: dict[tuple[int, int], float] = {}
    nodes = n + 2
    s, t = n, n + 1

    def add_edge(u: int, v: int, capacity: float) -> None:
        """An edge ``u -> v``; a second edge between the same nodes adds its capacity to the first's."""
        if capacity > 0 and u != v:
            capacities[u, v] = capacities.get((u, v), 0.0) + capacity

    for v, u in enumerate(table.units):
        if energy:
            add_edge(v, t, u.mobile_energy_j or 0.0)
        else:
            add_edge(s, v, u.cloud_ms)
            add_edge(v, t, u.mobile_ms)
    for tensor in table.tensors:
        size = transfer_bytes(tensor, transfer_dtype)
        grad = size if train and tensor.requires_grad else 0
        if energy:
            send = network.up_energy_j(size) + network.down_energy_j(grad)
            back = network.down_energy_j(size)
        else:
            send = network.up_ms(size) + network.down_ms(grad)
            back = network.down_ms(size)
        producer = s if tensor.producer == INPUT else tensor.producer
        if tensor.consumers:
            x, nodes = nodes, nodes + 1
            add_edge(producer, x, send)
            for c in tensor.consumers:
                add_edge(x, c, INF)
                if producer != s:
                    add_edge(c, producer, INF)
        if tensor.output and not train and producer != s:
            add_edge(s, producer, back)  # the result comes back when its producer ran on the server
    side = _device_side(capacities, s, t)
    on_device = tuple(v in side for v in range(n))
    prefix = _prefix_length(on_device)
    kind: Kind = "mobile-only" if all(on_device) else "cloud-only" if not any(on_device) else "dag-cut"
    if prefix is not None and kind == "dag-cut":
        kind = "split"
    layer = _describe(table, on_device)
    cost = point_cost(
        table,
        network,
        on_device,
        point=prefix if prefix is not None else -1,
        layer=layer,
        kind=kind,
        transfer_dtype=transfer_dtype,
    )
    frontier_value = best_frontier.value(objective)
    cut_value = cost.value(objective)
    if frontier_value is None or cut_value is None:
        raise ValueError("energy cannot be ranked: the device's compute energy is unknown")
    gain = frontier_value - cut_value
    if gain <= 1e-9 * max(1.0, abs(frontier_value)):
        # The cut is optimal among cuts that use the server (they share the round trip); the best frontier is
        # at least as good, so it is the DAG's best too.
        p = best_frontier.point
        return DagCut(best_frontier, tuple(i < p for i in range(n)), False, 0.0)
    return DagCut(cost, on_device, prefix is None, gain)


def _device_side(capacities: dict[tuple[int, int], float], s: int, t: int) -> set[int]:
    """The source side of the minimum ``s``-``t`` cut of the graph whose edges are ``capacities`` (:data:`INF`: never
    cut): the nodes reachable from ``s`` in the residual network of a maximum flow (networkx's preflow-push, its
    default and here its fastest) through more than :data:`_SLACK` of residual capacity.

    The capacities (milliseconds, joules) go to networkx as exact integers: each float is a fraction with a power of
    two below, so all of them times the largest such power are integers, and the flow is computed without a
    rounding error (networkx's flow algorithms compare residuals with 0 exactly and can fail on float capacities,
    as their documentation warns).

    Which cut, when several are minimal: the smallest source side, the same for every maximum flow, so ties go to the
    cut that keeps the fewest units on the device; and cuts within :data:`_SLACK` of the minimum are ties too (their
    difference is a rounding error of the costs' sums).  This is the cut the hand-written max-flow this replaced
    chose (it read its residual with the same slack), and the exact evaluator then compares it with the frontiers, a
    tie with one going to the frontier.  ``networkx.minimum_cut`` would return the largest source side instead (the
    nodes that cannot reach ``t``).
    """
    import networkx as nx
    from networkx.algorithms.flow import preflow_push

    ratios = {edge: c.as_integer_ratio() for edge, c in capacities.items() if c != INF}
    scale = max((den for _, den in ratios.values()), default=1)
    graph = nx.DiGraph()
    graph.add_nodes_from((s, t))
    graph.add_edges_from(edge for edge, c in capacities.items() if c == INF)  # no capacity: infinite
    graph.add_edges_from((u, v, {"capacity": num * (scale // den)}) for (u, v), (num, den) in ratios.items())
    residual = preflow_push(graph, s, t)
    slack_num, slack_den = _SLACK.as_integer_ratio()
    slack = scale * slack_num // slack_den  # in the same integers; a residual is an integer, so floor is exact
    unsaturated = nx.DiGraph(
        (u, v) for u, v, edge in residual.edges(data=True) if edge["capacity"] - edge["flow"] > slack
    )
    unsaturated.add_node(s)
    return {s} | nx.descendants(unsaturated, s)


def _prefix_length(on_device: Sequence[bool]) -> int | None:
    """``p`` when the device runs exactly units ``[0, p)``, else None."""
    p = sum(on_device)
    return p if all(on_device[:p]) and not any(on_device[p:]) else None


def _describe(table: CostTable, on_device: Sequence[bool]) -> str:
    """The last device unit of a prefix, else the server units that run before device ones (what a prefix cannot)."""
    p = _prefix_length(on_device)
    if p is not None:
        return "(input)" if p == 0 else table.units[p - 1].name
    last = max(i for i, d in enumerate(on_device) if d)
    early = [table.units[i].name for i in range(last) if not on_device[i]]
    shown = ", ".join(early[:3]) + (f" and {len(early) - 3} more" if len(early) > 3 else "")
    return f"device up to {table.units[last].name}, server also runs {shown}"


def reprice(row: PointCost, network: NetworkProfile) -> PointCost:
    """The same point on another link: its bytes and compute stay, its transfer time and energy change."""
    remote = row.kind != "mobile-only"
    transfer_ms = network.up_ms(row.up_bytes) + network.down_ms(row.down_bytes) + (network.rtt_ms if remote else 0)
    e_transfer = network.up_energy_j(row.up_bytes) + network.down_energy_j(row.down_bytes)
    return replace(
        row,
        transfer_ms=transfer_ms,
        total_ms=row.mobile_ms + transfer_ms + row.cloud_ms,
        transfer_energy_j=e_transfer,
        total_energy_j=None if row.mobile_energy_j is None else row.mobile_energy_j + e_transfer,
    )


def block_points(table: CostTable, depth: int) -> list[int]:
    """Points between modules at ``depth`` of the module tree (``--depth 2`` on mobilenet_v2: after each
    ``features.N`` block): fewer rows, each a boundary of a whole block."""

    def block(name: str) -> str:
        return ".".join(name.split("#")[0].split(".")[:depth])

    names = [u.name for u in table.units]
    return [p for p in range(1, len(names)) if block(names[p - 1]) != block(names[p])]
