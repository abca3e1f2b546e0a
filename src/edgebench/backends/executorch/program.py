"""What a ``.pte`` program declares, read from the file without ExecuTorch (:mod:`.flatbuffer`).

A user's ``--model path.pte`` is checked where the input enters (:mod:`edgebench.config.trial`), before any worker
starts, so this reads only the file: each method's inputs and outputs (shape and dtype of each tensor: the
program fixes them, an upper bound where it was exported with dynamic shapes), the arenas its memory planning
reserved (``non_const_buffer_sizes``), and its instructions (the op of each kernel call, the backend of each delegate
call), which label the ETDump's events in a trace.  Schema: ExecuTorch's ``schema/program.fbs`` (file identifier
``ET12``), slots as numbered there.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from edgebench.backends.executorch.flatbuffer import Table, root

FILE_IDENTIFIER = b"ET12"
#: ``ScalarType`` (``schema/scalar_type.fbs``) -> numpy's name for the dtype.
DTYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32", 7: "float64",
          11: "bool", 15: "bfloat16", 27: "uint16", 28: "uint32", 29: "uint64"}  # fmt: skip
#: ``KernelTypes`` union member of a tensor, ``InstructionArguments`` members (0 is NONE in both).
_TENSOR = 5
_KERNEL_CALL, _DELEGATE_CALL = 1, 2
_INSTRUCTIONS = {1: "KernelCall", 2: "DelegateCall", 3: "MoveCall", 4: "JumpFalseCall", 5: "FreeCall"}


class NotProgram(ValueError):
    """The bytes are not an ExecuTorch program."""


@dataclass(frozen=True)
class TensorSpec:
    dims: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class Method:
    """One method of a program (``forward``...)."""

    name: str
    inputs: tuple[TensorSpec | None, ...]
    outputs: tuple[TensorSpec | None, ...]
    #: Bytes of each planned (mutable) arena; index 0 is reserved by ExecuTorch (always 0).
    planned_bytes: tuple[int, ...]
    #: Per instruction of the first chain: the op of a kernel call (``convolution``), ``<backend> call`` for a
    #: delegate call, the instruction's kind otherwise.
    instructions: tuple[str, ...]
    delegates: tuple[str, ...]


def _tensor(value: Table) -> TensorSpec | None:
    if value.scalar(0, "B", 0) != _TENSOR:  # EValue.val_type
        return None
    tensor = value.table(1)
    if tensor is None:
        return None
    code = tensor.scalar(0, "b", 6)  # Tensor.scalar_type
    return TensorSpec(tuple(tensor.scalars(2, "i")), DTYPES.get(code, f"scalar type {code}"))


def _op_name(name: str) -> str:
    """``aten::convolution`` -> ``convolution`` (the label the ETDump's ``native_call_*`` events get)."""
    return name.rsplit("::", 1)[-1]


def _method(plan: Table) -> Method:
    values = plan.tables(2)
    operators = [_op_name(op.string(0) or "?") for op in plan.tables(6)]
    delegates = tuple(d.string(0) or "?" for d in plan.tables(7))
    chains = plan.tables(5)
    instructions = []
    for instruction in chains[0].tables(2) if chains else []:
        kind = instruction.scalar(0, "B", 0)
        args = instruction.table(1)
        if kind == _KERNEL_CALL and args is not None:
            instructions.append(operators[args.scalar(0, "i", 0)])
        elif kind == _DELEGATE_CALL and args is not None:
            instructions.append(f"{delegates[args.scalar(0, 'i', 0)]} call")
        else:
            instructions.append(_INSTRUCTIONS.get(kind, "instruction"))

    def specs(index: int) -> tuple[TensorSpec | None, ...]:
        return tuple(_tensor(values[i]) for i in plan.scalars(index, "i"))

    return Method(
        name=plan.string(0) or "",
        inputs=specs(3),
        outputs=specs(4),
        planned_bytes=tuple(plan.scalars(8, "q")),
        instructions=tuple(instructions),
        delegates=delegates,
    )


def parse(data: bytes) -> dict[str, Method]:
    """The methods of a program's bytes, by name."""
    try:
        top = root(data, FILE_IDENTIFIER)
    except ValueError:
        raise NotProgram("not an ExecuTorch program (no ET12 identifier)") from None
    try:
        return {m.name: m for m in map(_method, top.tables(1))}  # Program.execution_plan
    except (struct.error, IndexError) as exc:
        raise NotProgram(f"a damaged ExecuTorch program ({exc})") from None


def read(path: str | Path) -> dict[str, Method]:
    return parse(Path(path).read_bytes())
