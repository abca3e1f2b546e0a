"""Memory by category of one torch step, measured on its tensors (the paper's Figure 9, Observation 9).

One step runs under three watches: ``torch.autograd.graph.saved_tensors_hooks`` sees every tensor autograd keeps
for the backward pass, a global forward pre-hook sees the tensors the step feeds its outermost modules (the input
batch), and after the step the parameters' ``.grad`` and the optimizers' state are walked.  Each figure is the sum
of distinct storages (a view and its base, or a weight saved by two layers, count once); saved tensors that are
parameters or the input are counted there, not as activations.  The categorized step is the first warm-up step (or
one extra untimed step when there is none), so the measured steps run without the hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn

from edgebench.records.memory import MemoryByCategory

_StorageKey = tuple[str, int]


def _storage(t: torch.Tensor) -> tuple[_StorageKey, int]:
    """A key naming ``t``'s storage and that storage's size in bytes (its own size when it has no storage)."""
    try:
        storage = t.untyped_storage()
        return (str(t.device), storage.data_ptr()), storage.nbytes()
    except (RuntimeError, NotImplementedError):  # quantized, sparse or wrapper tensors
        return (str(t.device), id(t)), t.numel() * t.element_size()


class StorageSet:
    """Distinct storages and their total bytes."""

    def __init__(self, tensors: Iterable[torch.Tensor] = ()) -> None:
        self.sizes: dict[_StorageKey, int] = {}
        for t in tensors:
            self.add(t)

    def add(self, t: torch.Tensor) -> None:
        key, size = _storage(t)
        self.sizes[key] = size

    def __contains__(self, key: _StorageKey) -> bool:
        return key in self.sizes

    @property
    def nbytes(self) -> int:
        return sum(self.sizes.values())


def tensors_in(value: Any) -> Iterable[torch.Tensor]:
    """The tensors in ``value``, looking into lists, tuples and dicts (an optimizer's state, a module's inputs)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v)


def optimizers_of(task: Any) -> list[torch.optim.Optimizer]:
    """Every optimizer a task holds (a GAN holds two), found among its attributes."""
    found = []
    for value in vars(task).values():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, torch.optim.Optimizer):
                found.append(v)
    return found


class StepWatch:
    """The tensors one step feeds its outermost modules and the ones autograd saves, collected while it runs."""

    def __init__(self, params: StorageSet) -> None:
        self.params = params
        self.inputs = StorageSet()
        self.saved = StorageSet()
        self._depth = 0

    def _pre(self, module: nn.Module, args: Any) -> None:
        if self._depth == 0:
            for t in tensors_in(args):
                if t.grad_fn is None and not isinstance(t, nn.Parameter):  # a batch, not an upstream module's output
                    self.inputs.add(t)
        self._depth += 1

    def _post(self, module: nn.Module, args: Any, output: Any) -> None:
        self._depth -= 1

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        self.saved.add(t)
        return t

    def run(self, step: Callable[[], Any]) -> Any:
        from torch.nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook

        handles = [
            register_module_forward_pre_hook(lambda m, a: self._pre(m, a)),
            register_module_forward_hook(lambda m, a, o: self._post(m, a, o)),
        ]
        try:
            with torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t):
                return step()
        finally:
            for handle in handles:
                handle.remove()

    @property
    def activations_bytes(self) -> int:
        return sum(size for key, size in self.saved.sizes.items() if key not in self.params and key not in self.inputs)


class MemoryCategorizer:
    """Categorizes the first step it wraps (or one extra step) and keeps the answer for the worker's ``done``."""

    def __init__(
        self,
        model: nn.Module,
        task: Any,
        *,
        mode: str,
        device: str,
        batch_size: int,
        runtime_bytes: int | None,
        packed_weights: bool = False,
    ) -> None:
        self.model, self.task, self.mode, self.device = model, task, mode, device
        self.batch_size, self.runtime_bytes = batch_size, runtime_bytes
        #: int8: the quantized engine packs the weights outside ``parameters()``, so they cannot be counted here.
        self.packed_weights = packed_weights
        self.result: MemoryByCategory | None = None

    def categorizing(self, step: Callable[[], Any]) -> Callable[[], Any]:
        """``step``, whose first call is also categorized."""

        def first(*args: Any) -> Any:
            if self.result is not None:
                return step()
            return self._measure(step)

        return first

    def ensure(self, step: Callable[[], Any]) -> None:
        """Categorize one extra step if no warm-up step did."""
        if self.result is None:
            self._measure(step)

    def _measure(self, step: Callable[[], Any]) -> Any:
        params = StorageSet(self.model.parameters())
        watch = StepWatch(params)
        out = watch.run(step)
        train = self.mode == "train"
        unexposed = [] if train else ["gradients, optimizer state, saved activations: none in inference"]
        if self.packed_weights:
            unexposed.append("parameters: int8 weights are packed by the quantized engine, not tensor parameters")
        grads = StorageSet(p.grad for p in self.model.parameters() if p.grad is not None)
        state = StorageSet(t for opt in optimizers_of(self.task) for t in tensors_in(list(opt.state.values())))
        cuda = self.device.startswith("cuda")
        self.result = MemoryByCategory(
            device="cuda" if cuda else "cpu",
            mode=self.mode,
            batch_size=self.batch_size,
            runtime_bytes=self.runtime_bytes,
            params_bytes=None if self.packed_weights else params.nbytes,
            gradients_bytes=grads.nbytes if train else None,
            optimizer_bytes=state.nbytes if train else None,
            input_bytes=watch.inputs.nbytes,
            activations_bytes=watch.activations_bytes if train else None,
            peak_includes_runtime=not cuda,
            unexposed=unexposed,
        )
        return out

    def with_peak(self, peak_bytes: int | None) -> MemoryByCategory | None:
        return None if self.result is None else self.result.model_copy(update={"peak_bytes": peak_bytes})
