"""The worker's events: one typed record per kind, written one JSON object per line and read back the same way.

These models are the single declaration of what a worker (and the agent around it) reports: the worker writes
through :class:`EventWriter`, which builds the record, so a misspelled or missing field fails where it is made,
not later in a report; the agent, the store and the reports read lines back through :func:`parse_events`.  Every
timestamp is ``time.perf_counter_ns()`` on the device, the clock its sampler stamps samples with.

Adding a field with a default is compatible both ways; renaming one is not (stored series keep the old lines).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Annotated, Any, Literal, TypeVar

from pydantic import ConfigDict, Field, TypeAdapter

from edgebench.records.lm import LMSetup
from edgebench.records.memory import MemoryByCategory
from edgebench.records.model import Record
from edgebench.records.quantization import Quantization

Phase = Literal["warmup", "train", "infer_warmup", "infer"]


class _Event(Record):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelLoad(Record):
    """Loading the trial's model in the fresh worker: the backend's own section (its words in ``what``), timed on
    the monotonic clock, with the process's peak resident memory over it (``VmHWM``, reset where the kernel
    allows) and how far that peak rose above the memory resident before the load began."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seconds: float
    peak_memory_bytes: int | None = None
    added_memory_bytes: int | None = None
    #: What was timed, e.g. ``onnxruntime: InferenceSession creation``.
    what: str
    #: Whether the peak is the load's own (VmHWM reset before it) or since the process began (not resettable).
    peak_since: Literal["load", "process start"] = "load"


#: A ``--command`` trial's ``Ready.env`` key: why no process sensor watched the program (it ran as its shell, or
#: under a counting tool), which the trial's notes say beside the figures it leaves empty.
UNWATCHED_ENV = "command_unwatched"


class Ready(_Event):
    """The worker built its workload and waits for ``go``: what it will run, as the backend built it."""

    event: Literal["ready"] = "ready"
    pid: int | None = None
    params: int | None = None
    input_shape: list[int] | None = None
    num_classes: int | None = None
    #: The backend's own environment (framework version, its thread pools, affinity).
    env: dict[str, Any] = Field(default_factory=dict)
    #: An int8 trial's quantization, as the backend measured it while building the model.
    quantization: Quantization | None = None
    #: The model's load, as the backend timed it (None from a worker older than the record).
    model_load: ModelLoad | None = None
    #: A language model's set-up: what trains and what is frozen, its text, what generation runs.
    language_model: LMSetup | None = None


class Idle(_Event):
    """The idle baseline: the device held quiet (model built, nothing running) while the sampler polled."""

    event: Literal["idle"] = "idle"
    start_ns: int
    end_ns: int
    seconds: float


class Step(_Event):
    """One timed step: a training step (forward, loss, backward, update) or an inference pass."""

    event: Literal["step"] = "step"
    phase: Phase
    index: int
    start_ns: int
    end_ns: int
    loss: float | None = None
    #: ``--counters``: each perf event's count over the step, by perf's name.
    counters: dict[str, int] | None = None


class FirstStep(_Event):
    """The first step the worker ran after loading the model (its mode's step, run without any instrumentation),
    written after the phase it ran in.  ``counted_as``: the warm-up or measured phase whose step 0 it also was, or
    None for a step run before the measured ones only to be timed (a trial with no warm-up whose backend
    instruments its first step)."""

    event: Literal["first_step"] = "first_step"
    mode: Literal["train", "infer"]
    start_ns: int
    end_ns: int
    counted_as: Phase | None = None


class Eval(_Event):
    """One held-out evaluation of a time-to-accuracy run (or of a language model's held-out loss), between
    training steps and outside their timing.  ``step`` counts the measured steps before it; a language model is
    also evaluated before its warm-up (``before_training``, ``step`` 0)."""

    event: Literal["eval"] = "eval"
    step: int
    accuracy: float
    start_ns: int
    end_ns: int
    #: A language model's held-out cross-entropy, per token and per byte.
    loss_nats_per_token: float | None = None
    bits_per_byte: float | None = None
    before_training: bool = False


class Generate(_Event):
    """One timed greedy generation of a language model (batch 1, KV cache): the prompt of ``context`` tokens in one
    pass until the first token (``first_token_ns``), then ``new_tokens - 1`` more one at a time."""

    event: Literal["generate"] = "generate"
    context: int
    index: int
    warmup: bool = False
    start_ns: int
    first_token_ns: int
    end_ns: int
    new_tokens: int
    kv_cache_bytes: int


class Spans(_Event):
    """With ``--trace``: how many layer or op spans the worker saved after measuring."""

    event: Literal["spans"] = "spans"
    count: int
    granularity: Literal["layers", "ops"]


class Scheduling(Record):
    """What the scheduler did to the worker's threads over its measured steps (``/proc/self/task/*/schedstat`` and
    ``status``, read at the phase's edges): their time on a CPU, their time runnable but waiting on a run queue
    (another process on their cores, or their own threads beyond the cores), and how often one was taken off a CPU
    it still wanted (involuntary context switches; None where the kernel does not count them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    on_cpu_s: float
    run_queue_wait_s: float
    involuntary_switches: int | None = None
    #: The threads alive at the phase's end (a thread that ended inside it took its counts along).
    threads: int
    #: The wall time between the two readings.
    window_s: float


class Done(_Event):
    """The last line of a worker that finished: what only the worker itself can measure exactly."""

    event: Literal["done"] = "done"
    stopped_by: str | None = None
    train_cpu_s: float | None = None
    train_peak_memory_bytes: int | None = None
    infer_peak_memory_bytes: int | None = None
    gpu_peak_memory_bytes: int | None = None
    infer_cpu_s: float | None = None
    virtual_memory_peak_bytes: int | None = None
    #: The wall time the CPU times above were read over (absent from older workers: the step span is used).
    train_cpu_window_s: float | None = None
    infer_cpu_window_s: float | None = None
    #: Memory by category of the measured phase (the backend's own measurement); None where it measures none.
    memory_by_category: MemoryByCategory | None = None
    #: ``--counters`` on a ``--command`` trial: each perf event's count over the command's whole run (exec to the
    #: exit of its process tree), by perf's name; per-step counts, where taken, are on the steps.
    counters: dict[str, int] | None = None
    #: The scheduler's counters of the worker's threads over the measured steps (None from an older worker, or a
    #: kernel without scheduler statistics).
    train_sched: Scheduling | None = None
    #: A language model's generation phase: memory by category of its longest context (with the phase's peak).
    generation_memory: MemoryByCategory | None = None


class Error(_Event):
    """The last line of a worker that failed inside the trial (the launcher turns it into the trial's status)."""

    event: Literal["error"] = "error"
    status: Literal["oom", "crashed"]
    reason: str
    peak_memory_bytes: int | None = None


Event = Annotated[
    Ready | Idle | Step | FirstStep | Eval | Generate | Spans | Done | Error, Field(discriminator="event")
]
_EVENTS = TypeAdapter(list[Event], config=ConfigDict(defer_build=True))  # as every Record: built on first use
_KINDS: dict[str, type[_Event]] = {
    kind.model_fields["event"].default: kind
    for kind in (Ready, Idle, Step, FirstStep, Eval, Generate, Spans, Done, Error)
}


class EventWriter:
    """Line-buffered JSON-lines writer: each event is on disk when the call returns, so a crash loses none."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def __call__(self, event: str, **fields: Any) -> None:
        self._stream.write(_line(_KINDS[event](**fields)) + "\n")


#: Events as records, or as the dicts a stored series decodes to; functions that take these read them as records.
EventsLike = Sequence[Event | dict[str, Any]]


def as_events(events: Iterable[Event | dict[str, Any]]) -> list[Event]:
    """Typed events from records or their JSON-decoded dicts (a stored series, a test's hand-built sequence)."""
    return _EVENTS.validate_python(list(events))


def parse_events(text: str | None) -> list[Event]:
    """Events from JSON lines; a torn last line (a worker killed mid-write) ends the sequence, as it ended there."""
    from edgebench.parsing import json_text  # here, not at import: the worker (under its memory budget) never reads

    raw = []
    for line in (text or "").splitlines():
        try:
            raw.append(json_text(line))
        except ValueError:
            break
    return as_events(raw)


def read_events(path: Path) -> list[Event]:
    return parse_events(path.read_text()) if path.exists() else []


def _line(event: _Event) -> str:
    """One event as the line the store has always kept (``json.dumps``'s spacing, ``event`` first)."""
    return json.dumps(event.model_dump(mode="json"))


def dump_events(events: Sequence[Event]) -> str:
    """The stored ``events`` series: one JSON object per line."""
    return "\n".join(map(_line, events))


def steps_of(events: Iterable[Event], phase: Phase) -> list[Step]:
    return [e for e in events if isinstance(e, Step) and e.phase == phase]


def measured_phase(mode: str) -> Phase:
    """The phase of a trial's measured steps: ``train`` for a training trial, ``infer`` for an inference trial
    (whose warm-up is ``infer_warmup``), so an inference trial's steps are never labelled training."""
    return "infer" if mode == "infer" else "train"


def measured_steps(events: Iterable[Event]) -> list[Step]:
    """The measured steps, whichever the trial's mode: ``train`` steps, or ``infer`` steps where none trained."""
    events = list(events)
    return steps_of(events, "train") or steps_of(events, "infer")


E = TypeVar("E", bound=_Event)


def first(events: Iterable[Event], kind: type[E]) -> E | None:
    """The first event of ``kind``, or None."""
    return next((e for e in events if isinstance(e, kind)), None)
