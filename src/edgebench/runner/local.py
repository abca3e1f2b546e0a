"""Local launcher: one trial = one fresh worker process watched by one sampler process.

Order of events: start the worker (it imports torch and builds the model), wait for its ready line, start the
sampler on the worker's pid and wait for its first sample, then tell the worker to go.  So the sampler covers
every measured step, and neither process shares an interpreter with the other.  Whatever happens (crash,
out-of-memory, timeout, Ctrl-C), both children are gone when :func:`run_trial` returns or raises.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from edgebench.errors import UsageError
from edgebench.host.cpuset import format_cpu_list
from edgebench.host.environment import allowed_cores, host_environment
from edgebench.host.sysfs import SysFS
from edgebench.measure.attribution import trace_summary
from edgebench.measure.throttling import ThrottleReference
from edgebench.measure.trial import build_result, failed_result
from edgebench.result import TrialResult
from edgebench.runner.budget import Watch, budget_outcome, wait_within_budget
from edgebench.runner.idle import resolve_idle_s, wait_idle
from edgebench.runner.worker import READY_LINE
from edgebench.sensors.sampler import SamplerConfig, SamplerMeta, SamplerProcess
from edgebench.sensors.samples import read_samples
from edgebench.tracing.spans import SpanTable
from edgebench.trial import Trial

_STARTUP_TIMEOUT_S = 300.0


@dataclass
class TrialRun:
    """A finished trial: the result, and the raw series the store keeps beside it."""

    result: TrialResult
    events: list[dict[str, Any]]
    samples_csv: str | None
    #: The span table (JSON) of a traced trial (``--trace``), else None.
    spans_json: str | None = None
    #: What the sampler recorded besides the numbers: power channels, column labels, its own cost.
    sampler_meta: SamplerMeta | None = None

    def series(self) -> dict[str, str]:
        """The raw series the store keeps beside the result: step events (JSON lines), sensor samples (CSV) with
        the sampler's meta (JSON: power channels, labels), and with ``--trace`` the layer or op spans (JSON)."""
        series = {"events": "\n".join(json.dumps(e) for e in self.events)}
        if self.samples_csv is not None:
            series["samples"] = self.samples_csv
        if self.spans_json is not None:
            series["spans"] = self.spans_json
        if self.sampler_meta is not None:
            series["sampler_meta"] = json.dumps(asdict(self.sampler_meta))
        return series


def new_trial_id() -> str:
    """Sortable, and unique enough for launchers sharing a store: ``20261122-031502-4f9a0c1e``.

    Commands take any unambiguous prefix, so the 32 random bits cost nothing to type.
    """
    return time.strftime("%Y%m%d-%H%M%S") + "-" + os.urandom(4).hex()


def resolve_placement(trial: Trial) -> Trial:
    """Fill in cores/threads for this host; a core the process may not use is a usage error on ``--cores``."""
    allowed = allowed_cores()
    missing = sorted(set(trial.cores or ()) - set(allowed))
    if missing:
        raise UsageError(
            "--cores",
            f"cpu {format_cpu_list(missing)} is not available here (usable: {format_cpu_list(allowed)})",
        )
    return trial.with_placement(allowed)


def run_trial(trial: Trial, *, sysfs_root: str = "/", sample: bool = True) -> TrialRun:
    """Run ``trial`` in a fresh worker and return its result; failures come back as a result with a status."""
    trial = resolve_placement(trial)
    trial_id = new_trial_id()
    sysfs = SysFS(sysfs_root)
    env = host_environment(sysfs)
    reference = ThrottleReference.read(sysfs)  # before the trial heats the device
    with tempfile.TemporaryDirectory(prefix="edgebench-") as tmp:
        files = _TrialFiles.under(Path(tmp))
        files.spec.write_text(trial.model_dump_json())
        supervised = _supervise(trial, files, sysfs_root, sample)
        return _assemble(trial, trial_id, env, files, supervised, reference)


@dataclass(frozen=True)
class _TrialFiles:
    """Where the launcher and its two children exchange a trial's data (a temporary directory per trial)."""

    spec: Path
    events: Path
    samples: Path
    spans: Path
    stderr: Path

    @classmethod
    def under(cls, work: Path) -> _TrialFiles:
        names = ("trial.json", "events.jsonl", "samples.csv", "spans.json", "worker.stderr")
        return cls(*(work / name for name in names))


@dataclass
class _Supervised:
    """How the worker ended: ``failure`` is (status, reason), None for a clean exit."""

    failure: tuple[str, str] | None
    sampler_meta: SamplerMeta | None = None
    watch: Watch | None = None
    idle_event: dict[str, Any] | None = None


def _supervise(trial: Trial, files: _TrialFiles, sysfs_root: str, sample: bool) -> _Supervised:
    """Start the worker, then the sampler and the idle baseline once it is ready, and wait for it within the
    timeout (and memory budget).  Both children are gone when this returns or raises."""
    worker = _start_worker(trial, files.spec, files.events, files.stderr, files.spans)
    sampler: SamplerProcess | None = None
    ended = _Supervised(failure=None)
    try:
        deadline = time.monotonic() + trial.timeout_s
        startup_s = min(_STARTUP_TIMEOUT_S, trial.timeout_s)
        started = _wait_ready(worker, startup_s)
        if started == "timeout":
            ended.failure = (
                "timeout",
                f"worker was not ready within {startup_s:g} s (importing torch, building model)",
            )
            return ended
        if started == "exited":
            ended.failure = _failure(worker, files.events, files.stderr, "worker exited while starting")
            return ended
        if sample:
            config = SamplerConfig(
                out_csv=str(files.samples), interval_ms=trial.sample_interval_ms, sysfs_root=sysfs_root, pid=worker.pid
            )
            sampler = SamplerProcess(config).start()
            idle_s = resolve_idle_s(trial, sysfs_root)
            if idle_s > 0:  # the worker waits for "go" with its model built: the device is idle
                ended.idle_event = wait_idle(idle_s)
                deadline += idle_s
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
        try:
            left_s = max(0.0, deadline - time.monotonic())
            if trial.memory_budget_bytes is None:
                worker.wait(left_s)
            else:
                ended.watch = wait_within_budget(worker, left_s, trial.memory_budget_bytes, SysFS("/"))
            if worker.returncode != 0:
                ended.failure = _failure(worker, files.events, files.stderr, None)
        except subprocess.TimeoutExpired:
            _kill(worker)
            steps = sum(1 for e in _read_events(files.events) if e.get("phase") == "train")
            ended.failure = ("timeout", f"exceeded the {trial.timeout_s:g} s timeout after {steps} measured steps")
        if sampler is not None:
            ended.sampler_meta = sampler.stop()
            sampler = None
        return ended
    finally:
        if sampler is not None:
            sampler.kill()
        _kill(worker)


def _assemble(
    trial: Trial,
    trial_id: str,
    env: dict[str, Any],
    files: _TrialFiles,
    ended: _Supervised,
    reference: ThrottleReference | None = None,
) -> TrialRun:
    """The result (measured, or failed with its status and reason) and the raw series to store beside it."""
    events = _read_events(files.events)
    if ended.idle_event:
        events.insert(1 if events and events[0]["event"] == "ready" else 0, ended.idle_event)
    meta = ended.sampler_meta
    samples_csv = files.samples.read_text() if meta else None
    if ended.failure is None:
        spans_json = files.spans.read_text() if files.spans.exists() else None
        samples = read_samples(files.samples, meta) if meta else None
        result = build_result(trial, trial_id, events, samples, env, reference)
        if spans_json is not None:
            result.trace = trace_summary(SpanTable.from_json(spans_json), events)
        return TrialRun(result, events, samples_csv, spans_json, meta)
    status, reason, peak = *ended.failure, None
    if trial.memory_budget_bytes is not None:
        worker_peak = next((e.get("peak_memory_bytes") for e in events if e["event"] == "error"), None)
        status, reason, peak = budget_outcome(status, reason, trial.memory_budget_bytes, ended.watch, worker_peak)
    result = failed_result(trial, trial_id, status, reason, events, env)  # type: ignore[arg-type]
    if peak is not None:
        result = result.model_copy(update={"peak_memory_bytes": peak, "peak_memory_source": "vmhwm"})
    return TrialRun(result, events, samples_csv, None, meta)


def _start_worker(
    trial: Trial, spec: Path, events: Path, stderr_path: Path, spans: Path | None = None
) -> subprocess.Popen[str]:
    threads = str(trial.threads)
    env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)
    with open(stderr_path, "w") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "edgebench.runner.worker", str(spec), str(events), *([str(spans)] if spans else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            start_new_session=True,  # Ctrl-C reaches the launcher, which then stops the worker itself
        )


def _wait_ready(worker: subprocess.Popen[str], timeout_s: float) -> Literal["ready", "exited", "timeout"]:
    """Read the worker's stdout until its ready line (libraries may print before it)."""
    assert worker.stdout is not None
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(worker.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not sel.select(left):
                break
            line = worker.stdout.readline()
            if not line:  # EOF: the worker died while starting
                worker.wait()
                return "exited"
            if line.strip() == READY_LINE:
                return "ready"
    _kill(worker)
    return "timeout"


def _failure(
    worker: subprocess.Popen[str], events_path: Path, stderr_path: Path, fallback: str | None
) -> tuple[str, str]:
    """Status and one-line reason for a worker that did not finish cleanly."""
    for event in reversed(_read_events(events_path)):
        if event["event"] == "error":
            return event["status"], event["reason"]
    code = worker.poll()
    if code is not None and code < 0:
        sig = signal.Signals(-code)
        if sig == signal.SIGKILL:
            return "oom", "worker killed by SIGKILL, most likely by the kernel's out-of-memory killer"
        return "crashed", f"worker killed by {sig.name}"
    stderr = stderr_path.read_text(errors="replace").strip().splitlines() if stderr_path.exists() else []
    detail = stderr[-1] if stderr else fallback or f"worker exited with status {code}"
    return "crashed", detail


def _read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:  # torn last line of a killed worker
            break
    return events


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
