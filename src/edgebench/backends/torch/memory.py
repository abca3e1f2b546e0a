"""Memory by category of one torch step, measured on its tensors (the paper's Figure 9, Observation 9).

One step runs under three watches: ``torch.autograd.graph.saved_tensors_hooks`` sees every tensor autograd keeps
for the backward pass, a global forward pre-hook sees the tensors the step feeds its outermost modules (the input
batch), and after the step the parameters' ``.grad`` and the optimizers' state are walked.  Each figure is the sum
of distinct storages (a view and its base, or a weight saved by two layers, count once); saved tensors that are
parameters, frozen weights, buffers or the input are counted there, not as activations.  The categorized step is
the first warm-up step (or one extra untimed step when there is none), so the measured steps run without the hooks.

Parameters split by whether they train (``requires_grad``): the others are frozen weights, with the buffers of a
module that declares ``memory_category = "frozen_params"`` (an int8 weight and its scales).  A module declaring
``"kv_cache"`` holds a KV cache (in the model, or the task's ``kv_cache``); every other buffer is a buffer (rotary
tables, batch-norm statistics).  A tensor subclass (torchao's ``Int8Tensor``) counts the plain tensors inside it,
not ``numel`` times the float dtype it reports.

The input batch is what the step feeds its outermost modules during the forward pass only: activation
checkpointing reruns blocks during backward at module depth 0, and their recomputed inputs are not the batch.
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


def _plain(t: torch.Tensor) -> list[torch.Tensor]:
    """The plain tensors behind ``t`` (a tensor subclass's inner tensors, see
    :func:`edgebench.zoo.int8_weights.inner_tensors`)."""
    if type(t) in (torch.Tensor, nn.Parameter) or not hasattr(type(t), "__tensor_flatten__"):
        return [t]
    from edgebench.zoo.int8_weights import inner_tensors

    return inner_tensors(t)


class StorageSet:
    """Distinct storages and their total bytes."""

    def __init__(self, tensors: Iterable[torch.Tensor] = ()) -> None:
        self.sizes: dict[_StorageKey, int] = {}
        for t in tensors:
            self.add(t)

    def add(self, t: torch.Tensor) -> None:
        for plain in _plain(t):
            key, size = _storage(plain)
            self.sizes[key] = size

    def keys_of(self, t: torch.Tensor) -> list[_StorageKey]:
        return [_storage(plain)[0] for plain in _plain(t)]

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


def _declared(model: nn.Module, category: str) -> list[torch.Tensor]:
    """The buffers of every module of ``model`` that declares ``memory_category = category``."""
    return [
        b for m in model.modules() if getattr(m, "memory_category", None) == category for b in m.buffers(recurse=False)
    ]


def weight_categories(model: nn.Module, task: Any) -> dict[str, StorageSet]:
    """The model's tensors by category: ``params`` (trainable), ``frozen_params``, ``kv_cache``, ``buffers``; a
    storage is in one category only, the first of that order."""
    cache = getattr(task, "kv_cache", None)
    kv = StorageSet([*_declared(model, "kv_cache"), *(_declared(cache, "kv_cache") if cache is not None else [])])
    frozen_buffers = _declared(model, "frozen_params")
    params = StorageSet(p for p in model.parameters() if p.requires_grad)
    frozen = StorageSet([*(p for p in model.parameters() if not p.requires_grad), *frozen_buffers])
    taken = set(params.sizes) | set(frozen.sizes) | set(kv.sizes)
    buffers = StorageSet()
    for b in model.buffers():
        if not any(key in taken for key in buffers.keys_of(b)):
            buffers.add(b)
    frozen.sizes = {k: v for k, v in frozen.sizes.items() if k not in params.sizes}
    return {"params": params, "frozen_params": frozen, "kv_cache": kv, "buffers": buffers}


def optimizers_of(task: Any) -> list[torch.optim.Optimizer]:
    """Every optimizer a task holds (a GAN holds two), found among its attributes."""
    found = []
    for value in vars(task).values():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, torch.optim.Optimizer):
                found.append(v)
    return found


def in_backward() -> bool:
    """Whether autograd's engine is running a backward pass on this thread (a checkpointed block's recomputation
    runs its modules then)."""
    return bool(torch._C._current_graph_task_id() != -1)


class StepWatch:
    """The tensors one step feeds its outermost modules and the ones autograd saves, collected while it runs.

    ``known`` holds the storages already counted in another category (parameters, frozen weights, buffers, a KV
    cache): a saved tensor among them is not an activation."""

    def __init__(self, known: StorageSet) -> None:
        self.params = known
        self.inputs = StorageSet()
        self.saved = StorageSet()
        self._depth = 0

    def _pre(self, module: nn.Module, args: Any) -> None:
        if self._depth == 0 and not in_backward():
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
        known = StorageSet()
        for tensors in weight_categories(self.model, self.task).values():
            known.sizes.update(tensors.sizes)
        watch = StepWatch(known)
        out = watch.run(step)
        # after the step: a KV cache or an int8 swap made inside it is in place now
        weights = weight_categories(self.model, self.task)
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
            params_bytes=None if self.packed_weights else weights["params"].nbytes,
            frozen_params_bytes=None if self.packed_weights else weights["frozen_params"].nbytes,
            gradients_bytes=grads.nbytes if train else None,
            optimizer_bytes=state.nbytes if train else None,
            input_bytes=watch.inputs.nbytes,
            activations_bytes=watch.activations_bytes if train else None,
            kv_cache_bytes=weights["kv_cache"].nbytes,
            buffers_bytes=weights["buffers"].nbytes,
            peak_includes_runtime=not cuda,
            unexposed=unexposed,
        )
        return out

    def with_peak(self, peak_bytes: int | None) -> MemoryByCategory | None:
        return None if self.result is None else self.result.model_copy(update={"peak_bytes": peak_bytes})
