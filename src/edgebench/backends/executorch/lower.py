"""A zoo model lowered to an ExecuTorch program (``.pte``), for inference or for training; imports the exporter.

Inference: ``torch.export.export`` of the eval-mode model, then ``to_edge_transform_and_lower`` with the XNNPACK
partitioner (``executorch``) or none (``executorch-portable``), then ``to_executorch``.  fp16 is the model and its
input in half precision (``module.half()``); int8 is XNNPACK's PT2E flow (``XNNPACKQuantizer``, symmetric,
per-channel int8 weights and static int8 activations, calibrated on :mod:`edgebench.backends.quantize`'s inputs).

Training: the model with its loss (cross-entropy on the logits, the torch task's, as the first output) exported,
its backward added by ``torch.export.experimental._export_forward_backward`` (outputs: loss, the logits' argmax,
then one gradient per parameter, then the parameters themselves), lowered with ``to_edge`` to the portable kernels.
Two ops are decomposed first with torch's own decompositions:

* ``max_pool2d_with_indices_backward``: executorch 1.5.1's portable kernel adds into an output it never zeroes, so
  a Conv -> MaxPool model gets whatever the memory planner left in that slot as its gradient (the loss is NaN within
  a few steps; pytorch/executorch#21686, fixed upstream after 1.5.1);
* ``_native_batch_norm_legit_functional`` (batch norm in train mode): it has no out-variant kernel, so
  ``to_executorch`` refuses the program.

Lowered programs are cached under ``$EDGEBENCH_CACHE_DIR/executorch`` like the ONNX exports
(:mod:`edgebench.graph.export`), keyed by everything that decides their bytes: model, input, classes, batch, seed,
mode, kernels, precision, the calibration, the model code's fingerprint, this module's source and the
ExecuTorch version; a JSON sidecar carries what the worker needs of the program (:class:`Lowered`).
"""

from __future__ import annotations

import hashlib
import json
import operator
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from edgebench.graph import cache
from edgebench.host.files import file_sha256, read_description, read_sealed, write_description, write_sealed

#: The ops decomposed in a training program before lowering (see the module's docstring), by their aten names.
TRAINING_DECOMPOSITIONS = ("max_pool2d_with_indices_backward", "_native_batch_norm_legit_functional")


@dataclass(frozen=True)
class Instruction:
    """One instruction of the program's method as the trace labels it: its op, the module it ran for (None where
    the graph does not say), its phase (``forward`` / ``backward``), and for a delegate call the delegated ops in
    order (``[op, module]`` pairs)."""

    op: str
    module: str | None
    phase: str
    delegated: list[list[str | None]] = field(default_factory=list)


@dataclass(frozen=True)
class Lowered:
    """A cached program and what the worker needs of it."""

    path: str
    kernels: str
    precision: str
    mode: str
    #: The method's planned (mutable) arenas, bytes; ExecuTorch reserves index 0 (always 0).
    planned_bytes: list[int]
    #: Per instruction of the method's chain (ETDump events name instructions by index).
    instructions: list[Instruction]
    #: Training: the parameters' names in the order of the gradient and parameter outputs, and the user outputs.
    parameters: list[str] = field(default_factory=list)
    user_outputs: int = 1
    #: What the delegates took (``XnnpackBackend``), and the ops left outside any delegate.
    delegates: list[str] = field(default_factory=list)
    portable_ops: list[str] = field(default_factory=list)
    lowering_s: float = 0.0
    how: str = ""

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Lowered:
        doc = dict(doc)
        doc["instructions"] = [Instruction(**i) for i in doc["instructions"]]
        return cls(**doc)


def source_digest() -> str:
    """This module's source: a program lowered by other code is another program."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def cached(key_fields: dict[str, Any], stem: str, build: Callable[[Path], Lowered]) -> Lowered:
    """The program keyed by ``key_fields`` from the cache, else ``build(path)`` writes it there.

    The sidecar (what the lowering found: instructions, delegates, timings) is sealed with the key and the program's
    SHA-256 (:func:`edgebench.host.files.write_sealed`), so a torn or edited sidecar, or a program file replaced or
    cut short beside it, is lowered again, never run under the other's description; and the program is the one at
    the path the key names, whatever path a sidecar holds."""
    from edgebench.backends.executorch.runtime import version

    key_fields = {**key_fields, "code": cache.fingerprint(), "lower": source_digest(), "executorch": version()}
    key = hashlib.sha256(json.dumps(key_fields, sort_keys=True).encode()).hexdigest()[:20]
    directory = cache.cache_dir("executorch")
    path, meta = directory / f"{stem}-{key}.pte", directory / f"{stem}-{key}.json"
    doc = read_description(path, meta, key)
    try:
        if doc is not None:
            return Lowered.from_json(doc)
    except (ValueError, TypeError, KeyError):
        pass  # a sidecar of another shape (older code): lower again
    directory.mkdir(parents=True, exist_ok=True)
    lowered = build(path)
    write_description(path, meta, asdict(lowered), key)
    return lowered


def cached_accuracy(lowered: Lowered, inputs: list[bytes], compute: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The accuracy record of the cached program ``lowered`` on ``inputs`` (the compared inputs, their labels and
    batch, as bytes), from a sidecar of the program, else ``compute()`` writes it there.

    Why: the record is the program's outputs against the fp32 PyTorch model's (same seed, same code: both in the
    program's key) on the same inputs, so it is the same at every trial of that program, and taking it again cost
    more than the trial (256 inputs through the portable kernels' fp16 LeNet take seconds)."""
    digest = hashlib.sha256(b"\0".join(inputs)).hexdigest()[:12]
    program = Path(lowered.path)
    path = program.with_name(f"{program.stem}-accuracy-{digest}.json")
    derived_from = f"{program.name} {file_sha256(program)} {digest}"  # sealed: a torn or edited record is taken again
    record = read_sealed(path, derived_from)
    if record is None:
        record = compute()
        write_sealed(path, record, derived_from)
    return record


def _write(et: Any, path: Path) -> None:
    tmp = path.with_suffix(".pte.tmp")
    with open(tmp, "wb") as handle:
        et.write_to_file(handle)
    tmp.replace(path)


def lower_inference(
    module: Any, example: Any, path: Path, *, kernels: str, precision: str, calibration: Any = None
) -> Lowered:
    """``module`` (eval mode) at ``example``'s shape as an inference program at ``precision`` on ``kernels``."""
    import torch
    from executorch.exir import to_edge_transform_and_lower

    start = time.perf_counter()
    how = []
    module = module.eval()
    if precision == "fp16":
        module, example = module.half(), example.half()
        how.append("model and input in half precision (module.half())")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exported = torch.export.export(module, (example,))
        if precision == "int8":
            exported = torch.export.export(_quantized(exported, calibration), (example,))
            how.append(
                "int8: torchao PT2E with XNNPACKQuantizer (symmetric, per-channel int8 weights, static int8 "
                "activations)"
            )
        partitioner = None
        if kernels == "xnnpack":
            from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

            partitioner = [XnnpackPartitioner()]
        edge = to_edge_transform_and_lower(exported, partitioner=partitioner)
        facts = node_facts(edge.exported_program())
        et = edge.to_executorch()
    _write(et, path)
    how.insert(0, "torch.export -> to_edge_transform_and_lower(" + ("XnnpackPartitioner" if partitioner else "") + ")")
    return Lowered(
        path=str(path),
        kernels=kernels,
        precision=precision,
        mode="infer",
        planned_bytes=planned_bytes(et),
        instructions=instruction_map(facts, et),
        delegates=_delegates(et),
        portable_ops=_portable_ops(et),
        lowering_s=time.perf_counter() - start,
        how="; ".join(how),
    )


def _quantized(exported: Any, calibration: Any) -> Any:
    """The PT2E-quantized module of ``exported``, calibrated on ``calibration`` (batches of float32 arrays)."""
    import torch
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(exported.module(), quantizer)
    for batch in calibration:
        prepared(torch.from_numpy(batch))
    return convert_pt2e(prepared)


class WithLoss:
    """Built lazily (torch is imported by the child only): the model with the torch task's loss as its first
    output, as ExecuTorch's training API wants it."""

    @staticmethod
    def wrap(net: Any) -> Any:
        import torch
        import torch.nn.functional as F

        class _WithLoss(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.net = net

            def forward(self, x: Any, y: Any) -> tuple[Any, Any]:
                logits = self.net(x)
                return F.cross_entropy(logits, y), logits.detach().argmax(dim=1)

        return _WithLoss()


def lower_training(module: Any, inputs: Any, targets: Any, path: Path) -> Lowered:
    """``module`` (train mode) with its loss, forward and backward, as a training program on the portable kernels."""
    import torch
    from executorch.exir import EdgeCompileConfig, to_edge
    from torch._decomp import decomposition_table
    from torch.export import export
    from torch.export.experimental import _export_forward_backward

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        joint = _export_forward_backward(export(WithLoss.wrap(module.train()), (inputs, targets), strict=True))
        ops = [getattr(torch.ops.aten, name).default for name in TRAINING_DECOMPOSITIONS]
        joint = joint.run_decompositions({op: decomposition_table[op] for op in ops})
        edge = to_edge(joint, compile_config=EdgeCompileConfig(_check_ir_validity=False))
        facts = node_facts(edge.exported_program())
        et = edge.to_executorch()
    _write(et, path)
    specs = edge.exported_program().graph_signature.output_specs
    parameters = [str(s.target).removeprefix("net.") for s in specs if s.kind.name == "GRADIENT_TO_PARAMETER"]
    user = sum(1 for s in specs if s.kind.name in ("LOSS_OUTPUT", "USER_OUTPUT"))
    return Lowered(
        path=str(path),
        kernels="portable",
        precision="fp32",
        mode="train",
        planned_bytes=planned_bytes(et),
        instructions=instruction_map(facts, et),
        parameters=parameters,
        user_outputs=user,
        portable_ops=_portable_ops(et),
        lowering_s=time.perf_counter() - start,
        how="torch.export -> _export_forward_backward (joint graph: loss, argmax, gradients, parameters) -> "
        f"run_decompositions({', '.join(TRAINING_DECOMPOSITIONS)}) -> to_edge (portable kernels)",
    )


def planned_bytes(et: Any, method: str = "forward") -> list[int]:
    plan = next(p for p in et.executorch_program.execution_plan if p.name == method)
    return [int(b) for b in plan.non_const_buffer_sizes]


def _delegates(et: Any, method: str = "forward") -> list[str]:
    plan = next(p for p in et.executorch_program.execution_plan if p.name == method)
    return [d.id for d in plan.delegates]


def _portable_ops(et: Any, method: str = "forward") -> list[str]:
    plan = next(p for p in et.executorch_program.execution_plan if p.name == method)
    return sorted({f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators})


def _module_of(node: Any) -> str | None:
    """The innermost module a node ran in (its ``nn_module_stack``), without the training wrapper's ``net.``."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return None
    name = list(stack.values())[-1][0]
    return name.removeprefix("net.") or None


def _op_name(target: Any) -> str:
    """``aten.convolution.out`` -> ``convolution``: the op as labels show it."""
    text = getattr(target, "__name__", str(target))
    parts = str(getattr(target, "_name", None) or text).replace("::", ".").split(".")
    return next((p for p in parts if p not in ("aten", "dim_order_ops", "default", "out", "Tensor", "Scalar")), text)


def _forward_nodes(program: Any) -> set[str]:
    """Names of the nodes the loss and user outputs depend on (a training joint graph's forward part); every node
    of an inference graph."""
    graph = program.graph
    output = next(n for n in graph.nodes if n.op == "output")
    specs = program.graph_signature.output_specs
    if not any(s.kind.name == "LOSS_OUTPUT" for s in specs):
        return {n.name for n in graph.nodes}
    roots = [
        arg for arg, s in zip(output.args[0], specs, strict=False) if s.kind.name in ("LOSS_OUTPUT", "USER_OUTPUT")
    ]
    seen: set[str] = set()
    todo = [r for r in roots if hasattr(r, "name")]
    while todo:
        node = todo.pop()
        if node.name in seen:
            continue
        seen.add(node.name)
        todo.extend(n for n in node.all_input_nodes if n.name not in seen)
    return seen


@dataclass(frozen=True)
class NodeFacts:
    """What the trace needs of one edge-program node, read before ``to_executorch`` rewrites the graph."""

    op: str
    module: str | None
    forward: bool
    handle: int


def node_facts(program: Any) -> dict[int, list[NodeFacts]]:
    """Debug handle -> the edge program's call nodes that carry it (delegated subgraphs' nodes included), with their
    op, module and phase; read before ``to_executorch``, whose passes rewrite the graph in place."""
    forward = _forward_nodes(program)
    out: dict[int, list[NodeFacts]] = {}

    def walk(graph: Any, everything_forward: bool) -> None:
        for node in graph.nodes:
            handle = node.meta.get("debug_handle")
            if node.op != "call_function" or node.target is operator.getitem or not isinstance(handle, int):
                continue
            facts = NodeFacts(
                _op_name(node.target), _module_of(node), everything_forward or node.name in forward, handle
            )
            out.setdefault(handle, []).append(facts)

    walk(program.graph, False)
    for _, sub in program.graph_module.named_modules():
        original = getattr(sub, "original_module", None)
        if original is not None:
            walk(original.graph, True)  # a delegate runs inference graphs only
    return out


def instruction_map(facts: dict[int, list[NodeFacts]], et: Any, method: str = "forward") -> list[Instruction]:
    """Each instruction of ``method``'s chain: op, module, phase, and for a delegate call its delegated nodes in
    graph order (the ETDump's per-op events of the delegate are matched to them by :mod:`.trace`)."""
    plan = next(p for p in et.executorch_program.execution_plan if p.name == method)
    handles = et.debug_handle_map.get(method, {})
    out: list[Instruction] = []
    for index, instruction in enumerate(plan.chains[0].instructions):
        args = instruction.instr_args
        ids = handles.get(index)
        ids = [] if ids is None else ([ids] if isinstance(ids, int) else list(ids))
        found = [f for h in ids for f in facts.get(h, [])]
        phase = "forward" if not found or any(f.forward for f in found) else "backward"
        kind = type(args).__name__
        if kind == "DelegateCall":
            delegated = [[f.op, f.module] for f in sorted(found, key=lambda f: f.handle)]
            backend = plan.delegates[args.delegate_index].id
            out.append(Instruction(f"{backend} call", None, phase, delegated))
        elif kind == "KernelCall":
            op = plan.operators[args.op_index]
            module = next((f.module for f in found if f.module), None)
            out.append(Instruction(_op_name(op.name), module, phase))
        else:
            out.append(Instruction(kind, None, phase))
    return out
