"""A minimum s-t cut on a small graph (Dinic's max-flow), for the DAG's best partition (DADS).

The layer graphs are a few hundred nodes, so a plain-Python max-flow takes milliseconds and keeps networkx out
of the dependencies.  Capacities are floats; ``INF`` edges are never cut.
"""

from __future__ import annotations

from collections import deque

INF = float("inf")


class FlowGraph:
    def __init__(self, n: int) -> None:
        self.n = n
        self.adj: list[list[int]] = [[] for _ in range(n)]
        self.to: list[int] = []
        self.cap: list[float] = []

    def add_node(self) -> int:
        self.adj.append([])
        self.n += 1
        return self.n - 1

    def add_edge(self, u: int, v: int, capacity: float) -> None:
        if capacity <= 0 or u == v:
            return
        self.adj[u].append(len(self.to))
        self.to.append(v)
        self.cap.append(capacity)
        self.adj[v].append(len(self.to))
        self.to.append(u)
        self.cap.append(0.0)

    def min_cut(self, s: int, t: int, eps: float = 1e-12) -> tuple[float, set[int]]:
        """The cut's value and the nodes on the source side."""
        flow = 0.0
        while True:
            level = self._levels(s, eps)
            if level[t] < 0:
                break
            it = [0] * self.n
            while True:
                pushed = self._augment(s, t, level, it, eps)
                if pushed <= eps:
                    break
                flow += pushed
        level = self._levels(s, eps)
        return flow, {v for v in range(self.n) if level[v] >= 0}

    def _levels(self, s: int, eps: float) -> list[int]:
        level = [-1] * self.n
        level[s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for e in self.adj[u]:
                v = self.to[e]
                if self.cap[e] > eps and level[v] < 0:
                    level[v] = level[u] + 1
                    queue.append(v)
        return level

    def _augment(self, s: int, t: int, level: list[int], it: list[int], eps: float) -> float:
        """One augmenting path in the level graph, found without recursion (a chain of 1,000 layers is a path of
        2,000 edges, deeper than Python's stack)."""
        path: list[int] = []
        u = s
        while True:
            if u == t:
                pushed = min(self.cap[e] for e in path)
                for e in path:
                    self.cap[e] -= pushed
                    self.cap[e ^ 1] += pushed
                return pushed
            while it[u] < len(self.adj[u]):
                e = self.adj[u][it[u]]
                v = self.to[e]
                if self.cap[e] > eps and level[v] == level[u] + 1:
                    path.append(e)
                    u = v
                    break
                it[u] += 1
            else:  # a dead end: never enter it again in this phase
                if not path:
                    return 0.0
                level[u] = -1
                e = path.pop()
                u = self.to[e ^ 1]
                it[u] += 1
