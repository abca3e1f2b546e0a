"""How a ``--command`` workload's output says where its steps end: a regex per step, or a window and a mean.

``--step-pattern`` is either a regular expression matched against each line the workload prints (a match ends a
step; named groups such as ``loss`` are kept, numbers as numbers) or the name of a pattern shipped here for a tool
whose output users should not have to write a regex for.  Two tools print no line per step: the MNN suite's
``runTrainDemo.out`` (a mean latency line, and its training window in ``train_stamp.result``) and TFLite's
``benchmark_model`` (averages in microseconds).  For them the pattern reads a *summary* instead: the mean step
time and how many steps it averages, which the trial records as such (``env["step_times"] = "mean only"``).

A user's regex is data that runs: ``(a+)+$|step`` backtracks for longer than any trial on one line of output.  It
runs on RE2 (``pip install 'edgebench[re2]'``: google-re2, linear time, no backtracking) wherever that is installed
and takes the pattern; otherwise (or for what only Python's engine has: lookarounds, backreferences) on Python's
``re`` with each search bounded in time (:data:`SEARCH_LIMIT_S`), a pattern that exceeds it ending the trial with
that reason.

A pattern may also read a tool's per-op table into layer spans (``--trace layers``): benchmark_model's, printed
with ``--enable_op_profiling=true`` (:mod:`edgebench.backends.litert.op_table`).
"""

from __future__ import annotations

import contextlib
import re
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from edgebench.errors import UsageError


@dataclass(frozen=True)
class Summary:
    """A workload's own account of its measured steps when it prints none of them."""

    mean_step_ms: float
    #: Steps the mean averages, when the tool says (TFLite's ``count=``); else the trial's ``steps``.
    count: int | None = None
    #: Everything else the tool reported (TFLite's init and first-inference times, MNN's batch size).
    extra: dict[str, float | str] = field(default_factory=dict)
    #: The measured window's length when the tool stamps it (MNN's ``train_stamp.result``), ms.
    window_ms: float | None = None


@dataclass(frozen=True)
class StepPattern:
    """A per-line step regex, or a summary reader for tools that print only a mean."""

    name: str
    #: A compiled regex: RE2's, or Python's bounded in time (:func:`compile_user_regex`).
    regex: Any = None
    summary: str | None = None
    #: A file the workload writes in its directory that the summary needs (``train_stamp.result``).
    stamp_file: str | None = None
    description: str = ""
    #: The named group of a step line that holds the tool's own time of that step, in ms: the step then ends at the
    #: line and lasts that long (the time between lines also holds the tool's logging and data preparation).
    duration_group: str | None = None
    #: ``"module:function"`` reading the layer spans of a ``--trace layers`` trial from what the tool wrote
    #: (``(trial, lines, step windows, fetch) -> SpanTable | reason``; ``fetch(path)`` reads a device file).
    spans: str | None = None

    def step_fields(self, line: str) -> dict[str, float | str] | None:
        """The named groups of a step line (numbers as floats), or None when ``line`` ends no step."""
        assert self.regex is not None
        match = self.regex.search(line)
        if match is None:
            return None
        return {k: _number(v) for k, v in match.groupdict().items() if v is not None}

    def read_summary(self, lines: list[str], stamp_text: str | None = None) -> Summary | None:
        return _SUMMARIES[self.summary](lines, stamp_text) if self.summary else None


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


_MNN_LATENCY = re.compile(r"Training latency of (?P<net>\S+) is : (?P<ms>[0-9.]+) ms \(batchsize is (?P<bs>\d+)\)")
_MNN_STAMP = re.compile(r"^(?P<what>Begin training|End trainning) : (?P<ms>\d+)", re.MULTILINE)


def _mnn_train_demo(lines: list[str], stamp_text: str | None) -> Summary | None:
    """``Training latency of <Net> is : <ms> ms (batchsize is <bs>)``; the window from ``train_stamp.result``."""
    for line in reversed(lines):
        if match := _MNN_LATENCY.search(line):
            window_ms = None
            if stamp_text:
                stamps = {m["what"]: int(m["ms"]) for m in _MNN_STAMP.finditer(stamp_text)}
                if "Begin training" in stamps and "End trainning" in stamps:
                    window_ms = float(stamps["End trainning"] - stamps["Begin training"])
            extra: dict[str, float | str] = {"net": match["net"], "batch_size": int(match["bs"])}
            return Summary(mean_step_ms=float(match["ms"]), extra=extra, window_ms=window_ms)
    return None


_TFLITE_TIMINGS = re.compile(
    r"Inference timings in us: Init: (?P<init>[0-9.]+), First inference: (?P<first>[0-9.]+), "
    r"Warmup \(avg\): (?P<warmup>[0-9.e+]+), Inference \(avg\): (?P<avg>[0-9.e+]+)"
)
_TFLITE_COUNT = re.compile(r"count=(?P<count>\d+) first=\d+ curr=\d+ min=\d+ max=\d+ avg=[0-9.e+]+ std=\d+")


def _tflite_benchmark_model(lines: list[str], stamp_text: str | None) -> Summary | None:
    """``Inference timings in us: Init: …, First inference: …, Warmup (avg): …, Inference (avg): …``.

    The count of the measured run is the last ``count=`` statistics line before the timings (the first such
    line is the warm-up's).
    """
    count = None
    for line in lines:
        if match := _TFLITE_COUNT.search(line):
            count = int(match["count"])
        if match := _TFLITE_TIMINGS.search(line):
            extra: dict[str, float | str] = {
                "init_ms": float(match["init"]) / 1e3,
                "first_inference_ms": float(match["first"]) / 1e3,
                "warmup_avg_ms": float(match["warmup"]) / 1e3,
            }
            return Summary(mean_step_ms=float(match["avg"]) / 1e3, count=count, extra=extra)
    return None


_SUMMARIES = {"mnn_train_demo": _mnn_train_demo, "tflite_benchmark_model": _tflite_benchmark_model}

#: ExecuTorch's default log line prefix (``runtime/platform/default/posix.cpp``: ``%c %02u:%02u:%02u.%06lu
#: executorch:%s:%zu] ``), so a pattern matches the line whatever its level, clock and source line.
_ET_LOG = r"^[DIEF] \d+:\d\d:\d\d\.\d{6} executorch:[\w.]+:\d+\] "

NAMED_PATTERNS: dict[str, StepPattern] = {
    p.name: p
    for p in (
        StepPattern(
            "mnn-train-demo",
            summary="mnn_train_demo",
            stamp_file="train_stamp.result",
            description="the MNN suite's runTrainDemo.out: mean training latency, window from train_stamp.result",
        ),
        StepPattern(
            "tflite-benchmark-model",
            summary="tflite_benchmark_model",
            description="TFLite's benchmark_model: 'Inference timings in us: ... Inference (avg)'; with "
            "--enable_op_profiling=true its per-op table gives --trace layers",
            spans="edgebench.backends.litert.op_table:benchmark_model_spans",
        ),
        StepPattern(
            "executorch-runner",
            # examples/portable/executor_runner/executor_runner.cpp: "Iteration %u of %u: %f ms" per execution
            regex=re.compile(_ET_LOG + r"Iteration (?P<iteration>\d+) of (?P<iterations>\d+): (?P<ms>[0-9.]+) ms$"),
            duration_group="ms",
            spans="edgebench.backends.executorch.device:etdump_spans",
            description="ExecuTorch's executor_runner: 'Iteration <i> of <n>: <ms> ms' per execution (its own time "
            "of method->execute()); with --trace layers, per-op spans from the ETDump it wrote (--etdump_path)",
        ),
        StepPattern(
            "executorch-train-cifar",
            # extension/training/examples/CIFAR/train.cpp: every 100th batch's loss and times
            regex=re.compile(
                _ET_LOG + r"Epoch \[(?P<epoch>\d+)/(?P<epochs>\d+)\], Batch \[(?P<batch>\d+)/(?P<batches>\d+)\], "
                r"Loss: (?P<loss>[0-9.]+), Data prep: (?P<data_prep_ms>[0-9.]+) ms, Train: (?P<ms>[0-9.]+) ms$"
            ),
            duration_group="ms",
            description="ExecuTorch's CIFAR training example: 'Epoch [e/E], Batch [b/B], Loss: ..., Train: <ms> ms', "
            "every 100th batch (its forward_backward + SGD step time)",
        ),
    )
}


#: The longest one search of one output line may take: a sane step pattern takes microseconds.
SEARCH_LIMIT_S = 1.0


class PatternTimeout(ValueError):
    """A user's regex backtracked past :data:`SEARCH_LIMIT_S` on one line."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`PatternTimeout` in this block after ``seconds`` (Python's regex engine checks for signals as it
    backtracks).  Only the main thread receives signals; elsewhere the block runs unbounded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise PatternTimeout(f"took over {seconds:g} s on one line")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class BoundedRegex:
    """Python's compiled regex whose ``search`` gives up after :data:`SEARCH_LIMIT_S`."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.compiled = pattern
        self.pattern = pattern.pattern

    def search(self, line: str) -> re.Match[str] | None:
        with _time_limit(SEARCH_LIMIT_S):
            return self.compiled.search(line)


def compile_user_regex(text: str) -> Any:
    """``text`` on RE2 where installed and it takes it (linear time), else on Python's ``re`` bounded in time; a
    ``re.error`` for a pattern neither engine compiles."""
    try:
        import re2
    except ImportError:
        re2 = None
    if re2 is not None:
        with contextlib.suppress(Exception):  # re2.error: a feature only backtracking engines have
            return re2.compile(text)
    return BoundedRegex(re.compile(text))


def step_pattern(text: str) -> StepPattern:
    """A shipped pattern by name, else ``text`` compiled as a regex; a bad regex is one usage line."""
    key = text.strip().lower().replace("_", "-")
    if key in NAMED_PATTERNS:
        return NAMED_PATTERNS[key]
    try:
        return StepPattern("regex", regex=compile_user_regex(text))
    except re.error as exc:
        raise UsageError(
            "--step-pattern",
            f"{text!r} is not a regular expression ({exc}) nor a shipped pattern ({', '.join(NAMED_PATTERNS)})",
        ) from None


def check_step_pattern(text: str) -> str:
    """The Trial's check: a ``ValueError`` for a pattern that is neither a shipped name nor a regex."""
    try:
        step_pattern(text)
    except UsageError as exc:
        raise ValueError(exc.message) from None
    return text
