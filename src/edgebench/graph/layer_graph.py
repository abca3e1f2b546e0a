"""The layer graph of one forward pass as plain data: what the partition solver cuts.

It is recorded from a real torch forward pass (:mod:`.torch_graph`) or read from a model file's ONNX graph
(:mod:`.onnx_graph`), and kept between commands as JSON (:mod:`.graph_cache`); it lives in the model graph, below
the partition analysis, so the recorders and the solver share one record without the solver importing torch.
``units`` are the leaf layer calls in the order they ran, ``tensors`` every tensor that one unit produced and a
later unit (or the caller, for the model's outputs) consumed.  Cutting after unit ``p - 1`` sends to the server every
tensor made on the device and used on the server, so inside a residual block both branches cross, and a DenseNet cut
sends every feature map the dense block still concatenates.  Sizes keep the element count and dtype, so a transfer
can be costed at the model's own precision or at a compressed one (``--transfer-dtype``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

#: Producer index of the model's inputs: they are on the device before any unit runs.
INPUT = -1


@dataclass(frozen=True)
class Unit:
    """One call of a leaf layer: a place the model can be cut after."""

    #: ``features.3.conv.0`` (the module's qualified name; ``#2`` added for its second call in the pass).
    name: str
    #: The module's qualified name as the layer tracer labels it (the root is named by its class).
    module: str
    type: str
    #: Trainable parameters the unit holds (0 on repeated calls): the optimizer's share in split training.
    params: int = 0


@dataclass(frozen=True)
class GraphTensor:
    """A tensor that flows from one unit to later ones."""

    #: Unit index that made it, or :data:`INPUT`.
    producer: int
    #: Unit indices that read it, all after ``producer``.
    consumers: tuple[int, ...]
    numel: int
    dtype: str
    itemsize_bytes: int
    floating: bool
    #: Whether a gradient flows back through it in training (split learning returns it to the device).
    requires_grad: bool
    #: Whether the model returns it (the result that comes back to the device after inference).
    output: bool = False

    @property
    def nbytes(self) -> int:
        return self.numel * self.itemsize_bytes


@dataclass(frozen=True)
class ContainerShare:
    """Part of a container's own time (a residual add, a concat, a flatten) charged to the unit that hosts it.

    A container's own ops run between its children's calls; each is placed with the unit that ran last before
    it, so cutting after a block sends the block's result, not its two inputs.  ``weight`` is the share of the
    container's own forward (and backward) time per step that the unit takes; a container's weights sum to 1.
    """

    module: str
    unit: int
    weight: float


@dataclass(frozen=True)
class LayerGraph:
    model: str
    batch_size: int
    units: tuple[Unit, ...]
    tensors: tuple[GraphTensor, ...]
    shares: tuple[ContainerShare, ...] = ()
    #: Bytes of the training targets (labels): sent with the activations in split training.
    label_bytes: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> LayerGraph:
        """The graph :meth:`to_json` wrote (``ValueError``, ``KeyError`` or ``TypeError`` for any other text, a
        graph that is no graph among them: see :meth:`check`)."""
        doc: dict[str, Any] = json.loads(text)
        return cls(
            model=doc["model"],
            batch_size=doc["batch_size"],
            units=tuple(Unit(**u) for u in doc["units"]),
            tensors=tuple(GraphTensor(**{**t, "consumers": tuple(t["consumers"])}) for t in doc["tensors"]),
            shares=tuple(ContainerShare(**c) for c in doc["shares"]),
            label_bytes=doc["label_bytes"],
            notes=tuple(doc["notes"]),
        ).check()

    def check(self) -> LayerGraph:
        """``self`` if it is a graph the solver can cut: units, each tensor made before it is read by units that
        exist, sizes that are counts; else a ``ValueError`` (an emptied cache file made ``partition`` print "best
        point 0: 0.00 ms", one pointing at tensor 999 raised IndexError)."""
        n = len(self.units)
        if n == 0:
            raise ValueError("a layer graph without units")
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ValueError(f"batch size {self.batch_size!r}")
        for i, t in enumerate(self.tensors):
            counts = (t.numel, t.itemsize_bytes)
            if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in counts):
                raise ValueError(f"tensor {i}: its size is not a count")
            if not (isinstance(t.producer, int) and INPUT <= t.producer < n):
                raise ValueError(f"tensor {i} is made by unit {t.producer!r}, which the graph lacks")
            if not all(isinstance(c, int) and t.producer < c <= n for c in t.consumers):
                raise ValueError(f"tensor {i} is read by units the graph lacks or before it is made")
        if not all(isinstance(c.unit, int) and 0 <= c.unit < n for c in self.shares):
            raise ValueError("a container's share is charged to a unit the graph lacks")
        return self

    def crossing(self, point: int) -> list[GraphTensor]:
        """Tensors made on the device and read on the server when units ``[0, point)`` run on the device."""
        return [t for t in self.tensors if t.producer < point and any(c >= point for c in t.consumers)]
