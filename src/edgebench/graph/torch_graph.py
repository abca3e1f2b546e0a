"""The layer graph of a model for the partition analyzer, from the real tensors of one forward pass.

Module boundaries alone do not say what crosses a cut: a residual add, a concat or a flatten runs in the
container's own ``forward`` between its children's calls, and a skip connection carries a tensor past several
layers.  So the pass runs under a ``TorchFunctionMode`` that sees every torch op in execution order with its
input and output tensors, while module hooks say which leaf layer (a *unit*) is running.  An op inside a leaf
belongs to that leaf; a container's own op belongs to the unit that ran last before it (the first unit when none
has run yet).  Each output of an op is a new tensor *version* made by the op's unit, and each tensor argument is
a read by it: an in-place op (``ReLU(inplace=True)``) makes a new version of the same tensor object, so readers
after it depend on its unit.  Parameters and buffers are weights, not traffic, and are left out.

The result is plain data (:class:`edgebench.graph.layer_graph.LayerGraph`); the solver never imports torch.  The
pass is the workload's own training step (the torch backend's task, at the trial's precision), recorded here in the
model graph rather than in the backend because it is static analysis: nothing is timed.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

from edgebench.graph.layer_graph import INPUT, ContainerShare, GraphTensor, LayerGraph, Unit
from edgebench.graph.modules import module_labels


class _Version:
    __slots__ = ("consumers", "dtype", "floating", "itemsize", "numel", "output", "producer", "requires_grad")

    def __init__(self, producer: int, tensor: torch.Tensor) -> None:
        self.producer = producer
        self.consumers: set[int] = set()
        self.numel = tensor.numel()
        self.dtype = str(tensor.dtype).removeprefix("torch.")
        self.itemsize = tensor.element_size()
        self.floating = tensor.is_floating_point()
        self.requires_grad = tensor.requires_grad
        self.output = False


class _Recorder(TorchFunctionMode):
    """Watches one forward pass: module hooks keep the stack of running modules, the mode sees every op."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.root = model
        self.active = False
        self.done = False
        self.busy = False
        modules, names, types, _ = module_labels(model)
        self.names = {id(m): n for m, n in zip(modules, names, strict=True)}
        self.types = {id(m): t for m, t in zip(modules, types, strict=True)}
        self.leaf = {id(m): not any(True for _ in m.children()) for m in modules}
        self.weights = {id(t) for t in model.parameters()} | {id(t) for t in model.buffers()}
        self.stack: list[nn.Module] = []
        self.units: list[Unit] = []
        self.calls: dict[str, int] = {}
        self.seen_params: set[int] = set()
        self.completed = -1  # the last unit whose forward has ended
        self.current: list[int] = []  # units of the leaves now running (innermost last)
        #: Per running container call: the units its own ops landed on.
        self.hosts: list[list[int]] = []
        self.container_hosts: dict[str, list[list[int]]] = {}
        self.versions: list[_Version] = []
        self.live: dict[int, int] = {}  # id(tensor) -> its current version
        self.handles: list[Any] = []
        for module in modules:
            self.handles.append(module.register_forward_pre_hook(self._enter))
            self.handles.append(module.register_forward_hook(self._exit))

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    # Module hooks -------------------------------------------------------------------------------------------
    def _enter(self, module: nn.Module, args: Any) -> None:
        if module is self.root and not self.active and not self.done:
            self.active = True
            for t in tree_flatten(args)[0]:
                if isinstance(t, torch.Tensor):
                    self.make(t, INPUT)
            self.__enter__()
        if not self.active:
            return
        self.busy = True  # the bookkeeping below calls torch (numel, parameters): not the model's ops
        try:
            self._push(module)
        finally:
            self.busy = False

    def _push(self, module: nn.Module) -> None:
        self.stack.append(module)
        if self.leaf.get(id(module), True):
            name = self.names.get(id(module), type(module).__name__)
            call = self.calls.get(name, 0) + 1
            self.calls[name] = call
            params = 0
            if id(module) not in self.seen_params:
                self.seen_params.add(id(module))
                params = sum(p.numel() for p in module.parameters() if p.requires_grad)
            label = name if call == 1 else f"{name}#{call}"
            self.units.append(Unit(label, name, self.types.get(id(module), type(module).__name__), params))
            self.current.append(len(self.units) - 1)
        else:
            self.hosts.append([])

    def _exit(self, module: nn.Module, args: Any, output: Any) -> None:
        if not self.active:
            return
        self.stack.pop()
        if self.leaf.get(id(module), True):
            self.completed = self.current.pop()
        else:
            hosts = self.hosts.pop()
            if not hosts:  # a pure container (Sequential): its own time is the calls between its children
                hosts = [max(self.completed, 0)]
            name = self.names.get(id(module), type(module).__name__)
            self.container_hosts.setdefault(name, []).append(hosts)
        if module is self.root:
            self.__exit__(None, None, None)
            self.active, self.done = False, True
            for t in tree_flatten(output)[0]:
                if isinstance(t, torch.Tensor) and id(t) in self.live:
                    self.versions[self.live[id(t)]].output = True

    # Ops ----------------------------------------------------------------------------------------------------
    def _unit(self) -> int:
        if self.current and self.stack and self.leaf.get(id(self.stack[-1]), True):
            return self.current[-1]
        unit = max(self.completed, 0)
        if self.hosts:
            self.hosts[-1].append(unit)
        return unit

    def read(self, tensor: torch.Tensor, unit: int) -> None:
        version = self.live.get(id(tensor))
        if version is not None:
            v = self.versions[version]
            if unit != v.producer:
                v.consumers.add(unit)

    def make(self, tensor: torch.Tensor, unit: int) -> None:
        if id(tensor) in self.weights:
            return
        fresh = id(tensor) not in self.live
        self.live[id(tensor)] = len(self.versions)
        self.versions.append(_Version(unit, tensor))
        if fresh:  # forget the id when the tensor dies, so a new tensor at the same address is not mistaken for it
            weakref.finalize(tensor, self.live.pop, id(tensor), None)

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if not self.active or self.busy or not self.stack:
            return out
        unit = self._unit()
        inputs, _ = tree_flatten((args, kwargs))
        outputs, _ = tree_flatten(out)
        for t in inputs:
            if isinstance(t, torch.Tensor):
                self.read(t, unit)
        for t in outputs:
            if isinstance(t, torch.Tensor):
                self.make(t, unit)
        return out


def layer_graph(
    model: nn.Module, step: Callable[[], Any], *, model_name: str, batch_size: int, label_bytes: int = 0
) -> LayerGraph:
    """The layer graph of ``model``'s first forward call while ``step()`` runs (autograd on, as in training)."""
    recorder = _Recorder(model)
    try:
        step()
    finally:
        recorder.remove()
        if recorder.active:  # the forward raised: leave the mode
            recorder.__exit__(None, None, None)
    if not recorder.done:
        raise ValueError(
            f"{model_name}: its training step never calls its model as one module (a GAN's step calls its two "
            "networks apart), so there is no single pass to cut"
        )
    n = len(recorder.units)
    tensors = tuple(
        GraphTensor(
            producer=v.producer,
            consumers=tuple(sorted(c for c in v.consumers if c > v.producer)),
            numel=v.numel,
            dtype=v.dtype,
            itemsize_bytes=v.itemsize,
            floating=v.floating,
            requires_grad=v.requires_grad,
            output=v.output,
        )
        for v in recorder.versions
        if v.output or any(c > v.producer for c in v.consumers)
    )
    shares: list[ContainerShare] = []
    for module, calls in recorder.container_hosts.items():
        for hosts in calls:
            for unit in hosts:
                shares.append(ContainerShare(module, min(unit, n - 1), 1.0 / (len(calls) * len(hosts))))
    return LayerGraph(model_name, batch_size, tuple(recorder.units), tensors, tuple(shares), label_bytes)


def workload_graph(
    model_name: str,
    batch_size: int,
    *,
    preset: str | None = None,
    input_shape: tuple[int, ...] | None = None,
    num_classes: int | None = None,
    precision: str = "fp32",
    seed: int = 0,
) -> LayerGraph:
    """The layer graph of a registered workload at a trial's batch size, input and precision, on its synthetic
    batch.

    The task's own training step drives the model (under the trial's autocast), so the graph sees the inputs and
    activation dtypes the trial had: a bf16 trial's activations cross at 2 bytes an element.
    """
    from edgebench.workloads import get_workload
    from edgebench.zoo.precision import at_precision

    workload = get_workload(model_name)
    chosen = workload.preset(preset) if preset else None
    task = workload.session(
        batch_size,
        input_shape=input_shape or (chosen.input_shape if chosen else None),
        num_classes=num_classes or (chosen.num_classes if chosen else None),
        device="cpu",
        seed=seed,
    )
    targets = getattr(task, "targets", None)
    label_bytes = targets.numel() * targets.element_size() if isinstance(targets, torch.Tensor) else 0
    step = at_precision(task.train_step, precision, "cpu")
    return layer_graph(task.model, step, model_name=workload.name, batch_size=batch_size, label_bytes=label_bytes)
