"""LiteRT's per-op rows back to the model's modules: tensor names to modules, XNNPACK operators to TFLite ops.

litert-torch names each tensor after the module calls that produced it, as ``;``-joined locations of ``/``-joined
scopes, the first the root's class and each further one ``<module class>_<attribute>``::

    edgebench.zoo.lenet.LeNet/torch.nn.modules.container.Sequential_features/torch.nn.modules.conv.Conv2d_0;1

is ``features.0`` (a ``Conv2d``); an op that fused several calls (convolution, batch norm and ReLU) lists each, so
the location whose class fits the op (a ``Conv`` for ``CONV_2D``) is taken.  A model converted by another tool
(TensorFlow's ``model/conv2d/BiasAdd``) gives its ``/`` scopes instead.

The profiler does not time TFLite ops when XNNPACK runs the graph: it times XNNPACK's *operators*, in run order,
named by XNNPACK (``Convolution (NHWC, F32) IGEMM``) and numbered within the delegate, with no tensor names.  They
are matched to the TFLite ops in order (:func:`align`): an operator takes the next op of its kind, skipping only ops
XNNPACK is known to fold away (a ``PAD`` into the next convolution, activations, reshapes, weight dequantization);
an operator that matches none (``Convert`` ops XNNPACK inserts to quantize activations at run time) is *inserted*
and counted under the module of the next matched operator.  What could not be matched is said in the span notes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from edgebench.backends.litert.model_file import TfliteOp

#: TFLite op -> the XNNPACK operator names (prefixes) that compute it.
_XNNPACK_OF: dict[str, tuple[str, ...]] = {
    "CONV_2D": ("Convolution", "Fully Connected"),  # a 1x1 convolution runs as a GEMM
    "DEPTHWISE_CONV_2D": ("Convolution",),
    "TRANSPOSE_CONV": ("Deconvolution",),
    "FULLY_CONNECTED": ("Fully Connected",),
    "BATCH_MATMUL": ("Batch Matrix Multiply", "Fully Connected"),
    "MAX_POOL_2D": ("Max Pooling", "Argmax Pooling"),
    "AVERAGE_POOL_2D": ("Average Pooling", "Global Average Pooling"),
    "MEAN": ("Mean", "Global Average Pooling", "Reduce", "Sum"),
    "SUM": ("Sum", "Reduce"),
    "SUB": ("Subtract",),
    "MUL": ("Multiply",),
    "DIV": ("Divide",),
    "RESHAPE": ("Static Reshape", "Copy", "Reshape"),
    "SQUEEZE": ("Static Reshape", "Copy"),
    "EXPAND_DIMS": ("Static Reshape", "Copy", "Expand Dims"),
    "PAD": ("Constant Pad",),
    "CONCATENATION": ("Concatenate", "Copy"),
    "SOFTMAX": ("SoftMax", "Softmax"),
    "RELU": ("Clamp",),
    "RELU6": ("Clamp",),
    "RELU_N1_TO_1": ("Clamp",),
    "LOGISTIC": ("Sigmoid",),
    "QUANTIZE": ("Convert",),
    "DEQUANTIZE": ("Convert",),
    "STRIDED_SLICE": ("Slice", "Strided Slice"),
    "RESIZE_BILINEAR": ("Resize Bilinear",),
    "HARD_SWISH": ("HardSwish", "Hard Swish"),
}
#: TFLite ops XNNPACK may fold into a neighbour (or drop), so that no operator of theirs runs.
ELIDABLE = frozenset(
    {"PAD", "DEQUANTIZE", "QUANTIZE", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "RELU", "RELU6", "RELU_N1_TO_1"}
)
#: How far ahead of the next unmatched op an operator's match is looked for.
LOOKAHEAD = 4
#: TFLite op -> the module classes whose call it is (for picking the location of a fused op).
_CLASS_OF = {
    "CONV_2D": "Conv",
    "DEPTHWISE_CONV_2D": "Conv",
    "TRANSPOSE_CONV": "Conv",
    "FULLY_CONNECTED": "Linear",
    "BATCH_MATMUL": "Linear",
    "MAX_POOL_2D": "MaxPool",
    "AVERAGE_POOL_2D": "AvgPool",
    "MEAN": "AvgPool",
}
_UNIQUIFIER = re.compile(r"^\d*$")


def fits(operator: str, op: str) -> bool:
    """Whether the XNNPACK ``operator`` (``Convolution (NHWC, F32) IGEMM``) can compute the TFLite ``op``."""
    names = _XNNPACK_OF.get(op)
    if names is not None:
        return operator.startswith(names)
    head = operator.split(" (", 1)[0].replace(" ", "_").upper()
    return head == op


def align(operators: Sequence[str], ops: Sequence[TfliteOp]) -> list[int | None]:
    """For each XNNPACK operator (in run order), the index into ``ops`` of the TFLite op it computes, or None for
    one XNNPACK inserted.  A match may skip only :data:`ELIDABLE` ops."""
    matched: list[int | None] = []
    nxt = 0
    for operator in operators:
        found = None
        for j in range(nxt, min(nxt + LOOKAHEAD, len(ops))):
            if fits(operator, ops[j].name):
                found = j
                break
            if ops[j].name not in ELIDABLE:
                break
        matched.append(found)
        if found is not None:
            nxt = found + 1
    return matched


@dataclass(frozen=True)
class Scope:
    """One scope of a tensor's location: the attribute (``conv1``, ``0``) and the module's class where known."""

    name: str
    kind: str


def locations(tensor_name: str) -> list[list[Scope]]:
    """The module scopes of each location in a tensor's name (outermost first, root excluded)."""
    out = []
    for location in tensor_name.split(";"):
        if _UNIQUIFIER.match(location):
            continue  # litert-torch's ``;1`` uniquifiers and the empty parts of ``;;``
        parts = location.split("/")
        if "." in parts[0]:  # litert-torch: the root's class path, then ``<class path>_<attribute>`` per scope
            scopes = []
            for part in parts[1:]:
                tail = part.rsplit(".", 1)[-1]
                kind, _, attr = tail.partition("_")
                if not attr:
                    break
                scopes.append(Scope(attr, kind))
            out.append(scopes)
        else:  # another converter's ``model/conv2d/Conv2D``: scopes, then the op
            out.append([Scope(p, "scope") for p in parts[:-1] if p])
    return out


def root_class(ops: Sequence[TfliteOp], default: str) -> str:
    """The class litert-torch named the root after (``LeNet``), else ``default``."""
    for op in ops:
        for name in op.outputs:
            head = name.split(";", 1)[0].split("/", 1)[0]
            if "." in head:
                return head.rsplit(".", 1)[-1]
    return default


def _qualified(scopes: list[Scope], modules: dict[str, str] | None) -> list[tuple[str, str]]:
    """``(qualified name, class)`` of each prefix of ``scopes``; with ``modules`` known, a class whose own name holds
    ``_`` (so that ``Conv_BN_act`` split wrongly) is re-read against the known names, and unknown ones end the chain."""
    chain: list[tuple[str, str]] = []
    qual = ""
    for scope in scopes:
        candidate = f"{qual}.{scope.name}" if qual else scope.name
        if modules is not None and candidate not in modules:
            rest = scope.name
            while "_" in rest and candidate not in modules:
                rest = rest.split("_", 1)[1]
                candidate = f"{qual}.{rest}" if qual else rest
            if candidate not in modules:
                break
        qual = candidate
        chain.append((qual, modules[qual] if modules is not None else scope.kind))
    return chain


def op_module(op: TfliteOp, modules: dict[str, str] | None) -> list[tuple[str, str]]:
    """The module chain (outermost first) of ``op``: from the locations of its first output, the one whose class
    fits the op, else the deepest; where the output carries none (the model's output, named after the signature),
    from its weights' names, then its first input's."""
    wanted = _CLASS_OF.get(op.name)
    for names in (op.outputs[:1], op.inputs[1:], op.inputs[:1]):
        chains = [c for name in names for s in locations(name) if (c := _qualified(s, modules))]
        if chains:
            fitting = [c for c in chains if wanted and wanted in c[-1][1]]
            return fitting[0] if fitting else max(chains, key=len)
    return []


def file_modules(ops: Sequence[TfliteOp]) -> dict[str, str]:
    """The module tree a file's tensor names declare (a user's ``.tflite``): qualified name -> class."""
    modules: dict[str, str] = {}
    for op in ops:
        for qual, kind in op_module(op, None):
            modules.setdefault(qual, kind)
    return modules
