"""A torch model's modules as every layer table names them, and the autograd nodes each module call creates.

Both the run-time layer tracer (:mod:`edgebench.backends.torch.tracing.layers`, which times each module's forward and
backward) and the static counters of this part (:mod:`.layer_costs`, FLOPs and bytes per module; :mod:`.static`;
:mod:`.torch_graph`, the cut graph) need the same two facts of a model's graph: the labels of its modules in one
order (:func:`module_labels`; a trace's spans and a count's rows line up by them), and which autograd nodes belong
to which module call (:func:`claim_nodes`), so a backward op is charged to the module whose forward made it.  They
are declared here once, below the backends; the tracer's docstring says how the claiming keeps in-place ops working.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

#: The sequence number autograd gives ``AccumulateGrad`` nodes (the maximum): never a module's own node.
_ACCUMULATE_GRAD_SEQ = 2**64 - 1


def module_labels(model: nn.Module) -> tuple[list[nn.Module], list[str], list[str], list[int]]:
    """Modules in registration order with their names, types and parent indices (the root is named by its class)."""
    modules: list[nn.Module] = []
    names: list[str] = []
    index: dict[int, int] = {}
    for name, module in model.named_modules():
        index[id(module)] = len(modules)
        modules.append(module)
        names.append(name or type(module).__name__)
    parents = [-1] * len(modules)
    for i, module in enumerate(modules):
        for child in module.children():
            j = index.get(id(child))
            if j is not None and parents[j] == -1 and j != 0:
                parents[j] = i
    return modules, names, [type(m).__name__ for m in modules], parents


def output_tensors(output: Any) -> Iterator[torch.Tensor]:
    """Tensors in a module's output: a tensor, or tensors inside tuples, lists and dicts (two levels)."""
    if isinstance(output, torch.Tensor):
        yield output
    elif isinstance(output, (tuple, list)):
        for item in output:
            if isinstance(item, torch.Tensor):
                yield item
            elif isinstance(item, (tuple, list)):
                yield from (t for t in item if isinstance(t, torch.Tensor))
    elif isinstance(output, dict):
        yield from output_tensors(tuple(output.values()))


def input_floor(args: tuple[Any, ...], floor: int) -> int:
    """The highest autograd sequence number among ``args``' grad_fns and ``floor``."""
    for arg in args:
        if isinstance(arg, torch.Tensor):
            fn = arg.grad_fn
            if fn is not None:
                seq = fn._sequence_nr()
                if floor < seq < _ACCUMULATE_GRAD_SEQ:
                    floor = seq
    return floor


def claim_nodes(
    output: Any, floor: int, model_floor: int, owned: dict[Any, list[Any]], on_node: Callable[[Any, bool], None]
) -> int:
    """Claim for one module call the nodes it created that no call below it claimed; returns the highest number.

    A node is the call's when it is reachable from the call's outputs and numbered above ``floor`` (created after
    the call's inputs).  ``owned`` maps each claimed node to the *frontier* of the call that claimed it (the nodes
    where that call's walk stopped), so a container's walk jumps over its children's nodes to reach its own ops
    before them (``y = child(x * 2)``) without walking the children again.  ``on_node(node, is_exit)`` is told
    whether the node feeds no other node of this forward of the model (numbered above ``model_floor``): an exit
    runs last in its branch of the backward pass.
    """
    frontier: list[Any] = []
    if isinstance(output, torch.Tensor):
        todo = [output.grad_fn] if output.grad_fn is not None else []
    else:
        todo = [t.grad_fn for t in output_tensors(output) if t.grad_fn is not None]
    jumped: set[int] = set()
    top = floor
    while todo:
        fn = todo.pop()
        claimed = owned.get(fn)
        if claimed is not None:
            if claimed is not frontier and id(claimed) not in jumped:
                jumped.add(id(claimed))
                todo.extend(claimed)
            continue
        seq = fn._sequence_nr()
        if seq == _ACCUMULATE_GRAD_SEQ:
            continue
        if seq <= floor:
            frontier.append(fn)
            continue
        owned[fn] = frontier
        if seq > top:
            top = seq
        is_exit = True
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                todo.append(nxt)
                if is_exit and model_floor < nxt._sequence_nr() < _ACCUMULATE_GRAD_SEQ:
                    is_exit = False
        on_node(fn, is_exit)
    return top
