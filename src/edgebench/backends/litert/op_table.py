"""LiteRT's ``benchmark_model`` op-profiling table (``--enable_op_profiling=true``), read into layer spans, for a
phone without Python that runs the tool through ``--command`` (step pattern ``tflite-benchmark-model``).

The tool (google-ai-edge/LiteRT, the same code as tensorflow/lite/tools) prints, when the benchmark ends, the block
``Operator-wise Profiling Info for Regular Benchmark Runs:`` through ``TFLITE_LOG(INFO)``
(``tflite/profiling/profile_summary_formatter.cc``, ``HandleOutput``/``WriteOutput``): one message, so only its
first line carries the ``INFO: `` prefix (``tflite/tools/logging.h``; older releases print none, and to stderr),
then ``StatsCalculator::GetOutputString()`` (``third_party/xla/xla/tsl/util/stats_calculator.cc``; older:
``tensorflow/core/util/stats_calculator.cc``): a ``Run Order`` table whose fields are each ``"\\t"`` and a
right-aligned fixed-point value (``InitField``), with the columns named by a header row (``[node type]``,
``[first]``, ``[avg ms]``, ``[%]``, ``[cdf%]``, ``[mem KB]``, ``[times called]``, ``[Name]``; older releases add
``[start]``), so the columns are read from the header.  Rows (``tflite/profiling/profile_summarizer.cc``): an op the
interpreter ran is typed by its op (``CONV_2D``) and named ``[<output tensors>]:<node index>``; an XNNPACK operator
is typed by XNNPACK's name (``Convolution (NHWC, F32) IGEMM``) and named ``Delegate/<that name>:<its index>``.

``[avg ms]`` is an operator's mean time per call over the regular runs and ``[times called]`` its calls per run, so
its time per run is their product.  The tool prints no run of its own (the command's steps are its mean,
``Inference (avg)``: :mod:`edgebench.backends.command.patterns`), so in each measured step every operator's mean is
laid end to end from the step's start, in run order: the spans say how the mean run divides, not what one run did,
and the table's notes say so.  Labels: an interpreter op's output tensor names give its module (litert-torch names
tensors after modules, :mod:`.layers`); XNNPACK's rows carry no names, so they are matched to the model's ops only
where the ``.tflite`` file is at hand (pushed with ``--push``), else they sit under the root.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from edgebench.backends.litert.capi import DELEGATE_PROFILED_OPERATOR_INVOKE, OPERATOR_INVOKE
from edgebench.backends.litert.model_file import TfliteOp

if TYPE_CHECKING:
    from edgebench.records.trial import Trial

#: The block of the regular runs (the initialization block before it times AllocateTensors and the delegate).
RUN_BLOCK = "Operator-wise Profiling Info for Regular Benchmark Runs:"
_RUN_ORDER = re.compile(r"^=+ Run Order =+$")
_NODE = re.compile(r"^(?P<names>.*):(?P<index>\d+)$")


@dataclass(frozen=True)
class OpRow:
    """One row of the run-order table."""

    node_type: str
    first_ms: float
    avg_ms: float
    times_called: int
    name: str

    @property
    def delegated(self) -> bool:
        return self.name.startswith("Delegate/")

    @property
    def index(self) -> int:
        match = _NODE.match(self.name)
        return int(match["index"]) if match else -1

    def outputs(self) -> tuple[str, ...]:
        """An interpreter op's output tensor names (``[a, b]:3`` -> ``a``, ``b``)."""
        match = _NODE.match(self.name)
        names = match["names"] if match else self.name
        return tuple(n for n in names.strip("[]").split(", ") if n)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split("\t")]


def read_op_table(lines: Sequence[str]) -> list[OpRow] | None:
    """The primary graph's run-order rows of the regular runs' block, or None when the output has none."""
    at = next((i for i, line in enumerate(lines) if RUN_BLOCK in line), None)
    if at is None:
        return None
    table = next((i for i in range(at + 1, len(lines)) if _RUN_ORDER.match(lines[i].strip())), None)
    if table is None or table + 1 >= len(lines):
        return None
    header = _cells(lines[table + 1])
    try:
        col = {name: header.index(f"[{name}]") for name in ("node type", "first", "avg ms", "times called", "Name")}
    except ValueError:
        return None
    rows = []
    for line in lines[table + 2 :]:
        if not line.strip():
            break
        cells = _cells(line)
        if len(cells) <= max(col.values()):
            break
        try:
            rows.append(
                OpRow(
                    node_type=cells[col["node type"]],
                    first_ms=float(cells[col["first"]]),
                    avg_ms=float(cells[col["avg ms"]]),
                    times_called=int(cells[col["times called"]]),
                    name="\t".join(cells[col["Name"] :]),  # a name may hold a tab (the CSV mode's commas)
                )
            )
        except ValueError:
            break
    return rows or None


def row_ops(rows: Sequence[OpRow]) -> list[TfliteOp]:
    """The TFLite ops the rows show (the interpreter's, with their output names), for a model not at hand."""
    return [TfliteOp(r.index, r.node_type.split("/", 1)[0], r.outputs()) for r in rows if not r.delegated]


def op_table_spans(
    rows: Sequence[OpRow],
    windows: Sequence[tuple[int, int]],
    ops: Sequence[TfliteOp] | None,
    root: str,
    tid: int,
    model_note: str,
):  # -> SpanTable (imported lazily: numpy)
    """The layer span table of the measured steps ``windows``, each holding every row's mean run time end to end;
    ``ops``: the model's ops (its ``.tflite`` file read), None where the file is not at hand."""
    from edgebench.backends.litert.layers import file_modules, root_class
    from edgebench.backends.litert.profile import OpTime, Run, runs_table

    known = list(ops) if ops is not None else row_ops(rows)
    times = [
        OpTime(
            DELEGATE_PROFILED_OPERATOR_INVOKE if r.delegated else OPERATOR_INVOKE,
            r.index,
            r.node_type if r.delegated else r.node_type.split("/", 1)[0],
            0,
            round(r.avg_ms * max(r.times_called, 1) * 1e6),
        )
        for r in rows
    ]
    runs = [Run(start, end, start, list(times)) for start, end in windows]
    notes = {
        "source": "benchmark_model --enable_op_profiling=true: the run-order table of 'Operator-wise Profiling Info "
        "for Regular Benchmark Runs' (each operator's mean time per run over the tool's regular runs)",
        "op_times": "the tool reports means only: in each measured step (itself the tool's mean) every operator's "
        "mean is laid end to end from the step's start, in run order; the spans show how the mean run divides, "
        "not what any one run did",
        "labels": model_note,
        "resolution": "the table's 0.001 ms",
    }
    return runs_table(runs, (windows[0][0], windows[-1][1]), known, file_modules(known), root_class(known, root),
                      tid, notes)  # fmt: skip


def benchmark_model_spans(trial: Trial, lines: Sequence[str], windows: Sequence[tuple[int, int]], fetch: object) -> Any:
    """The step pattern's span reader (``tflite-benchmark-model``, :mod:`edgebench.backends.command.patterns`): the
    op table of the tool's output over the measured steps, else why there is none.  XNNPACK's rows are mapped to
    modules through a pushed ``.tflite`` file where this workstation can read it (``fetch`` is not needed: the table
    is in the output)."""
    from edgebench.backends.command.push import parse_push
    from edgebench.backends.litert.model_file import read_model

    rows = read_op_table(lines)
    if rows is None:
        return "its output has no per-op table (run benchmark_model with --enable_op_profiling=true)"
    if not windows:
        return "no measured step to lay the op table in"
    models = [str(local) for local, _ in map(parse_push, trial.push) if str(local).lower().endswith(".tflite")]
    ops, note = None, "XNNPACK's rows carry no tensor names and no .tflite file was pushed: they sit under the root"
    if len(models) == 1:
        try:
            ops = read_model(models[0]).ops
            note = f"XNNPACK's rows matched in run order to the ops of the pushed {models[0]}"
        except ValueError as exc:
            note = f"XNNPACK's rows sit under the root: the pushed model could not be read ({exc})"
    note += "; an interpreter op sits under the module its output tensors are named after"
    return op_table_spans(rows, windows, ops, trial.model, 0, note)
