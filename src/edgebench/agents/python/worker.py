"""The worker: runs one trial in a fresh process and writes its events, one JSON object per line.

Protocol with the agent: the worker applies its placement, builds the workload, writes a ``ready`` event and
prints ``edgebench-worker-ready``; it starts the warm-up when it reads ``go`` on stdin (by then the sampler is
polling).  Every step is an event (:mod:`edgebench.records.events`: phase, index, start_ns, end_ns, loss) on the
monotonic clock the sampler uses.  The last line is ``done`` or ``error`` (with ``status`` oom or crashed).

With ``mode="infer"`` the warm-up (phase ``infer_warmup``) and the measured steps (phase ``infer``) are forward
passes in inference mode, under the same stop rule, tracing and phase memory as training steps; no training runs.

With ``trace`` set, the worker also records layer or op spans during the measured steps and writes them once,
after measuring, to SPANS_JSON (the torch backend's :mod:`edgebench.backends.torch.tracing.record`).

The loop here (timed steps, stop rules, phase memory, events) imports no framework: the trial's backend
(``edgebench.registry.BACKENDS``) opens a :class:`edgebench.backends.base.BackendSession` that does the rest.

Run: ``python -m edgebench.agents.python.worker TRIAL_JSON EVENTS_JSONL [SPANS_JSON]``.
"""

from __future__ import annotations

import inspect
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edgebench.agents.python.budget import apply_memory_budget
from edgebench.agents.python.stopping import FixedSteps, StopRule, min_time_s, train_rule
from edgebench.backends.load import timing_load
from edgebench.host.lifetime import die_with_parent
from edgebench.host.perf_events import Counters, open_counters
from edgebench.host.sysfs import SysFS
from edgebench.records.events import EventWriter, Scheduling
from edgebench.records.trial import Trial
from edgebench.sensors.process import read_status_kib
from edgebench.sensors.sched import growth, read_threads
from edgebench.units import format_size

READY_LINE = "edgebench-worker-ready"
#: Texts of an allocation that failed, in an exception or on stderr: C++'s ``std::bad_alloc`` (then ``abort()``),
#: OpenBLAS's own message, glibc's ``ENOMEM`` text; the last two are the dynamic loader's, when a budget leaves no
#: room to map a shared library (an ``ImportError`` that is memory, not a missing module).
_OOM_MARKERS = (
    "out of memory",
    "can't allocate memory",
    "cannot allocate memory",
    "std::bad_alloc",
    "memory allocation failed",
    "memory allocation still failed",
    "cannot map zero-fill pages",
    "failed to map segment from shared object",
)


def is_allocation_failure(text: str) -> bool:
    """Whether ``text`` (an exception's message, a line of stderr) says an allocation failed."""
    lowered = text.lower()
    return any(marker in lowered for marker in _OOM_MARKERS)


class PhaseMemory:
    """Peak resident memory per phase: reset ``VmHWM`` through ``clear_refs`` at the start, read it at the end."""

    def __init__(self) -> None:
        self.proc = SysFS("/")
        self.resettable = True

    def reset(self) -> None:
        try:
            self.proc.write_text("/proc/self/clear_refs", "5")
        except OSError:
            self.resettable = False  # the sampled RSS peak is used instead

    def peak_bytes(self) -> int | None:
        kib = read_status_kib(self.proc, "self", "VmHWM")
        return kib * 1024 if kib is not None and self.resettable else None


def process_cpu_s() -> float:
    """User + system CPU time of this process, all threads: no sampling, but only as fine as the kernel's
    accounting (a thread on another core is brought up to date at its next tick), so short windows are withheld
    by :func:`edgebench.measure.utilization.checked_cpu_share_pct`."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class CpuClock:
    """The process's CPU time and the wall time over one and the same interval.

    CPU use is their ratio; dividing by the span of the step events instead (which starts after and ends before
    the CPU readings) overstates it on short phases, up to more cores than the device has.
    """

    def __init__(self) -> None:
        self._wall_ns = time.perf_counter_ns()
        self._cpu_s = process_cpu_s()

    def read(self) -> tuple[float, float]:
        """``(cpu_s, wall_s)`` since this clock started."""
        cpu_s = process_cpu_s() - self._cpu_s
        return cpu_s, (time.perf_counter_ns() - self._wall_ns) / 1e9


class SchedClock:
    """The scheduler's counters of this process's threads over an interval (:mod:`edgebench.sensors.sched`): how
    long they waited for a CPU and how often they were preempted, to the nanosecond at any window's length."""

    def __init__(self, proc: SysFS) -> None:
        self.proc = proc
        self._wall_ns = time.perf_counter_ns()
        self._start = read_threads(proc)

    def read(self) -> Scheduling | None:
        end = read_threads(self.proc)
        window_s = (time.perf_counter_ns() - self._wall_ns) / 1e9
        grown = growth(self._start, end)
        if grown is None:
            return None
        return Scheduling(
            on_cpu_s=grown.on_cpu_ns / 1e9,
            run_queue_wait_s=grown.run_queue_wait_ns / 1e9,
            involuntary_switches=grown.involuntary_switches,
            threads=len(end),
            window_s=window_s,
        )


def timed(
    fn: Callable[[], Any],
    rule: StopRule,
    phase: str,
    emit: EventWriter,
    sync: Callable[[], None],
    counters: Counters | None = None,
) -> tuple[list[float], str]:
    """Run ``fn`` as timed steps until ``rule`` stops the phase; returns the durations (ms) and the reason.
    With perf ``counters``, each step's event carries their counts over it (read outside its timing)."""
    clock = time.perf_counter_ns
    durations: list[float] = []
    while (reason := rule.check(durations)) is None:
        before = counters.read() if counters else None
        start = clock()
        out = fn()
        sync()
        end = clock()
        counts = None
        if counters and before is not None:
            counts = {n: b - a for n, a, b in zip(counters.names, before, counters.read(), strict=True)}
        durations.append((end - start) / 1e6)
        emit(
            "step",
            phase=phase,
            index=len(durations) - 1,
            start_ns=start,
            end_ns=end,
            loss=None if out is None else float(out),
            counters=counts,
        )
    return durations, reason


class FirstStep:
    """The first step after the model's load, timed on its own and run plain (no memory categories, no trace
    costs: those hooks move to the next step), so that the cold-start figure is the step an app would meet.

    :meth:`then` gives the phase function whose first call is this step; the event is written after the phase
    (:meth:`emit_once`), never inside a timed step."""

    def __init__(self, step: Callable[[], Any], sync: Callable[[], None]) -> None:
        self.step, self.sync = step, sync
        self.start_ns: int | None = None
        self.end_ns = 0
        self.emitted = False

    @property
    def ran(self) -> bool:
        return self.start_ns is not None

    def __call__(self) -> Any:
        self.start_ns = time.perf_counter_ns()
        out = self.step()
        self.sync()
        self.end_ns = time.perf_counter_ns()
        return out

    def then(self, later: Callable[[], Any]) -> Callable[[], Any]:
        """``self`` for the first call (if it has not run yet), ``later`` for every other."""

        def call() -> Any:
            return later() if self.ran else self()

        return call

    def emit_once(self, emit: EventWriter, mode: str, phase: str | None) -> None:
        """Write the ``first_step`` event once it ran (``phase``: the phase whose step 0 it was, None for none)."""
        if self.ran and not self.emitted:
            emit("first_step", mode=mode, start_ns=self.start_ns, end_ns=self.end_ns, counted_as=phase)
            self.emitted = True


def run(trial: Trial, emit: EventWriter, wait_for_go: Callable[[], None], spans_path: str | None = None) -> None:
    from edgebench.registry import BACKENDS

    # Opened before the session: counters inherit into threads started later (the framework's thread pools).
    counters = open_counters(trial.counters) if trial.counters else None
    backend = BACKENDS.load(trial.backend)
    with timing_load(f"{trial.backend}: the whole session opening (the backend times no load of its own)") as whole:
        session = backend.open_session(trial)
    model_load = getattr(session, "model_load", None) or whole.record
    emit(
        "ready",
        model_load=model_load,
        pid=os.getpid(),
        params=session.params,
        input_shape=list(session.input_shape),
        num_classes=session.num_classes,
        # the cores the worker runs on (``apply_affinity``), for every backend alike, then the backend's own facts
        env={"affinity": sorted(os.sched_getaffinity(0)), **session.env},
        quantization=getattr(session, "quantization", None),
        language_model=getattr(session, "language_model", None),
    )
    held_out = getattr(session, "held_out", None) if trial.data is not None and trial.mode == "train" else None
    text = getattr(getattr(session, "language_model", None), "text", None)
    rule = train_rule(
        trial,
        session.evaluate,
        lambda **e: emit("eval", **e),
        held_out=held_out,
        unigram_bits_per_byte=text.unigram_bits_per_byte if text is not None else None,
    )
    infer_only = trial.mode == "infer"
    if infer_only:  # before the tracer counts costs, so the counted step is the forward pass that is measured
        session.to_inference()
    # A backend whose tracer takes the counters (torch's layer spans) counts per layer; the others per step.
    per_layer = counters is not None and "counters" in inspect.signature(session.trace_recorder).parameters
    recorder = session.trace_recorder(counters=counters) if per_layer else session.trace_recorder()
    step, sync = (session.infer_step if infer_only else session.train_step), session.sync
    warm_phase, phase = ("infer_warmup", "infer") if infer_only else ("warmup", "train")
    # Memory by category, where the backend measures it: on the first warm-up step (or one extra untimed step).
    categorizer = session.memory_categorizer() if hasattr(session, "memory_categorizer") else None
    warm_step = categorizer.categorizing(step) if categorizer else step
    wait_for_go()
    memory = PhaseMemory()
    if held_out is not None:  # the base as the fine-tune starts from it, before any training step
        start_ns = time.perf_counter_ns()
        point = held_out()
        emit("eval", step=0, start_ns=start_ns, end_ns=time.perf_counter_ns(), before_training=True, **point)
    first = FirstStep(step, sync)
    instrumented_warm = recorder.counting(warm_step) if recorder else warm_step
    timed(first.then(instrumented_warm), FixedSteps(trial.warmup), warm_phase, emit, sync)
    first.emit_once(emit, trial.mode, warm_phase)
    if not first.ran and (categorizer or recorder):  # no warm-up: time the first step before the hooks' own
        first()
        first.emit_once(emit, trial.mode, None)
    if categorizer:
        categorizer.ensure(step)
    if recorder:
        recorder.ensure_costs(step)
        recorder.start()
    memory.reset()
    session.reset_device_peak_memory()
    sched_clock = SchedClock(memory.proc)
    cpu_clock = CpuClock()
    _, stopped_by = timed(step if first.ran else first.then(step), rule, phase, emit, sync, counters)
    train_cpu_s, train_cpu_window_s = cpu_clock.read()
    train_sched = sched_clock.read()
    first.emit_once(emit, trial.mode, phase)
    if recorder:
        recorder.stop()
        recorder.remove()
    train_peak = memory.peak_bytes()
    gpu_peak = session.device_peak_memory_bytes()
    infer_peak = infer_cpu_s = infer_cpu_window_s = None
    if infer_only:  # the measured steps were the inference: one phase, reported under both names
        infer_peak, infer_cpu_s, infer_cpu_window_s = train_peak, train_cpu_s, train_cpu_window_s
    elif trial.infer_steps:
        session.to_inference()
        timed(session.infer_step, FixedSteps(min(2, trial.infer_steps)), "infer_warmup", emit, sync)
        memory.reset()
        cpu_clock = CpuClock()
        passes = FixedSteps(trial.infer_steps, min_time_s(trial))
        timed(session.infer_step, passes, "infer", emit, sync, counters)
        infer_cpu_s, infer_cpu_window_s = cpu_clock.read()
        infer_peak = memory.peak_bytes()
    generation_memory = generation_phase(session, trial, emit, memory)
    vm_peak_kib = read_status_kib(memory.proc, "self", "VmPeak")
    if recorder and spans_path:
        emit("spans", count=recorder.save(spans_path), granularity=trial.trace)
    emit(
        "done",
        stopped_by=stopped_by,
        train_cpu_s=train_cpu_s,
        train_cpu_window_s=train_cpu_window_s,
        train_peak_memory_bytes=train_peak,
        infer_peak_memory_bytes=infer_peak,
        gpu_peak_memory_bytes=gpu_peak,
        infer_cpu_s=infer_cpu_s,
        infer_cpu_window_s=infer_cpu_window_s,
        train_sched=train_sched,
        virtual_memory_peak_bytes=vm_peak_kib * 1024 if vm_peak_kib is not None else None,
        memory_by_category=categorizer.with_peak(gpu_peak if gpu_peak is not None else train_peak)
        if categorizer
        else None,
        generation_memory=generation_memory,
    )


def generation_phase(session: Any, trial: Trial, emit: EventWriter, memory: PhaseMemory) -> Any:
    """A language model's timed generations: at each context length one untimed generation, then
    ``trial.generations`` timed ones (``generate`` events); before them one generation at the longest context is
    categorized (memory by category with its KV cache), and the phase's peak memory is read.  Returns that memory
    by category (None where the session generates nothing)."""
    setup = getattr(session, "language_model", None)
    contexts = list(getattr(setup, "contexts", None) or [])
    if not getattr(session, "generates", False) or not contexts or not trial.generations:
        return None
    session.to_inference()
    decode = trial.decode_tokens
    memory.reset()
    session.reset_device_peak_memory()
    categorizer = session.generation_categorizer()
    categorizer.ensure(lambda: session.generate(max(contexts), decode))
    for context in contexts:
        for index in range(-1, trial.generations):
            timing = session.generate(context, decode)
            emit("generate", context=context, index=max(index, 0), warmup=index < 0, **timing)
    gpu_peak = session.device_peak_memory_bytes()
    return categorizer.with_peak(gpu_peak if gpu_peak is not None else memory.peak_bytes())


def classify_failure(exc: BaseException) -> tuple[str, str]:
    """``(status, reason)`` for an exception raised inside a trial."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if isinstance(exc, MemoryError) or is_allocation_failure(str(exc)):
        return "oom", f"out of memory: {text or type(exc).__name__}"
    return "crashed", f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def apply_affinity(cores: tuple[int, ...] | None) -> None:
    """Pin this process before the framework starts its thread pools, so every thread inherits the mask."""
    if cores:
        os.sched_setaffinity(0, cores)


def main(argv: list[str] | None = None) -> int:
    die_with_parent()
    spec_path, events_path, *rest = argv or sys.argv[1:]
    spans_path = rest[0] if rest else None
    spec = Path(spec_path).read_text()
    raw = json.loads(spec)
    budget = raw.get("memory_budget_bytes")
    with open(events_path, "a", encoding="utf-8", buffering=1) as stream:
        emit = EventWriter(stream)  # opened before the budget binds, so that running out of it can be recorded
        # Before anything large is imported (the backend's framework), so the budget binds from the start.
        # Not on CUDA: its driver maps large writable host regions, and the budget caps the GPU allocator instead.
        if budget is not None and not str(raw.get("device", "cpu")).startswith("cuda"):
            in_use_kib = read_status_kib(SysFS("/"), "self", "VmData")
            if in_use_kib is not None and budget < in_use_kib * 1024:  # it would fail wherever the next byte is
                reason = (
                    f"out of memory: the budget is below the {format_size(in_use_kib * 1024)} the worker uses "
                    "before building anything"
                )
                emit("error", status="oom", reason=reason, peak_memory_bytes=in_use_kib * 1024)
                return 3
            apply_memory_budget(budget)
        return _run_recorded(spec, emit, spans_path)


def _run_recorded(spec: str, emit: EventWriter, spans_path: str | None) -> int:
    """Run the trial ``spec``; an exception (one raised by the budget too) becomes an ``error`` event."""
    try:
        trial = Trial.model_validate_json(spec)
        apply_affinity(trial.cores)
    except Exception as exc:
        status, reason = classify_failure(exc)
        emit("error", status=status, reason=reason, peak_memory_bytes=None)
        return 3

    def wait_for_go() -> None:
        print(READY_LINE, flush=True)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit(4)  # launcher went away
        # Nobody reads stdout after the handshake: send later prints to stderr so a chatty model cannot fill
        # the pipe and block.
        os.dup2(2, 1)

    try:
        run(trial, emit, wait_for_go, spans_path)
    except Exception as exc:  # recorded, never lost: the launcher turns it into the trial's status
        status, reason = classify_failure(exc)
        kib = read_status_kib(SysFS("/"), "self", "VmHWM")
        emit("error", status=status, reason=reason, peak_memory_bytes=None if kib is None else kib * 1024)
        return 3
    return 0


if __name__ == "__main__":
    code = main()
    # Everything the trial produced is on disk (the events file is line-buffered and closed, spans saved): skip
    # the interpreter's teardown, which with a framework loaded (torch: its thread pools, allocator, atexit
    # hooks) takes 0.3-0.8 s that every trial would wait for and nothing would measure.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
