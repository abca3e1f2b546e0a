"""The device-side agent: runs one trial on the device it is on and hands back one :class:`TrialBundle`.

Everything that must happen on the device, on the device's clock, happens here: the worker (a fresh process that
builds the workload and runs the timed steps), the sampler (a second process polling the sensors), the idle
baseline (the worker held quiet, model built, while the sampler polls) and the memory watchdog.  Order: start the
worker, wait for its ready line, start the sampler and wait for its first sample, hold the idle window, then tell
the worker to go, so the sampler covers every measured step and neither process shares an interpreter with the
other.  Whatever happens (crash, out-of-memory, timeout, Ctrl-C), both children are gone when :func:`run_agent`
returns or raises.

The launcher picks this agent (or the device-side ``sh`` agent of a ``--command`` trial) and a target runs it where
the device is: the local target calls :func:`run_agent` in its own process; a remote one runs
``python -m edgebench.agents.python.agent -`` there, sends the trial on stdin and reads the bundle (JSON) from its
stdout.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from edgebench.agents.native.process import NativeSamplerProcess, sampler_process
from edgebench.agents.python.budget import wait_within_budget
from edgebench.agents.python.idle import resolve_idle_s, wait_idle
from edgebench.agents.python.oom import OomCounts, kernel_oom_line, sigkill_cause
from edgebench.agents.python.worker import READY_LINE, is_allocation_failure
from edgebench.host.environment import host_environment
from edgebench.host.lifetime import interrupts_held
from edgebench.host.sysfs import SysFS
from edgebench.host.workdirs import SPEC_NAME, remove_stale_work_dirs, work_dir
from edgebench.records.bundle import Failure, MemoryWatch, TrialBundle
from edgebench.records.events import Error, Idle, measured_phase, read_events, steps_of
from edgebench.records.sampling import SamplerMeta
from edgebench.records.trial import Trial
from edgebench.sensors.sampler import SamplerConfig, SamplerProcess
from edgebench.sensors.thermal_trips import read_throttle_reference
from edgebench.workloads import name_model

_STARTUP_TIMEOUT_S = 300.0
#: The worker, by module: a fresh process of this interpreter per trial (``python -m``).
WORKER = "edgebench.agents.python.worker"


@dataclass(frozen=True)
class TrialFiles:
    """Where the agent and its two children exchange a trial's data (a temporary directory per trial)."""

    spec: Path
    events: Path
    samples: Path
    spans: Path
    stderr: Path

    @classmethod
    def under(cls, work: Path) -> TrialFiles:
        names = (SPEC_NAME, "events.jsonl", "samples.csv", "spans.json", "worker.stderr")
        return cls(*(work / name for name in names))


def run_agent(trial: Trial, *, sysfs_root: str = "/", sample: bool = True) -> TrialBundle:
    """Run ``trial`` (placement already resolved for this device) and bundle what was measured."""
    sysfs = SysFS(sysfs_root)
    env = host_environment(sysfs)
    reference = read_throttle_reference(sysfs)  # before the trial heats the device
    remove_stale_work_dirs()
    with work_dir() as tmp:
        files = TrialFiles.under(Path(tmp))
        files.spec.write_text(trial.model_dump_json())
        ended = _supervise(trial, files, sysfs_root, sample)
        events = read_events(files.events)
        if ended.idle is not None:  # on the worker's clock, after its ready line
            events.insert(1 if events and events[0].event == "ready" else 0, ended.idle)
        return TrialBundle(
            trial=trial,
            events=events,
            samples_csv=files.samples.read_text() if ended.sampler_meta else None,
            sampler_meta=ended.sampler_meta,
            spans_json=files.spans.read_text() if files.spans.exists() else None,
            env=env,
            throttle_reference=reference,
            failure=ended.failure,
            watch=ended.watch,
        )


@dataclass
class _Supervised:
    """How the worker ended: ``failure`` is None for a clean exit."""

    failure: Failure | None = None
    sampler_meta: SamplerMeta | None = None
    watch: MemoryWatch | None = None
    idle: Idle | None = None


def _supervise(trial: Trial, files: TrialFiles, sysfs_root: str, sample: bool) -> _Supervised:
    """Start the worker, then the sampler and the idle baseline once it is ready, and wait for it within the
    timeout (and memory budget).  Both children are gone when this returns or raises."""
    oom_before = OomCounts.read(SysFS("/"))  # the kernel's OOM-kill counts, to tell its SIGKILL from another's
    worker: subprocess.Popen[str] | None = None
    sampler: SamplerProcess | NativeSamplerProcess | None = None
    ended = _Supervised()
    try:
        with interrupts_held():  # a stop while it starts is taken once there is a handle to stop it with
            worker = _start_worker(trial, files)
        deadline = time.monotonic() + trial.timeout_s
        # Exporting, converting or quantizing a model (another backend, int8) and pretraining a language model's base
        # happen before the ready line, and can take minutes on a small device: those trials may use their whole
        # timeout to start.
        prepares = trial.backend != "torch" or trial.precision == "int8" or trial.pretrain_steps > 0
        startup_s = trial.timeout_s if prepares else min(_STARTUP_TIMEOUT_S, trial.timeout_s)
        started = _wait_ready(worker, startup_s)
        if started == "timeout":
            reason = f"worker was not ready within {startup_s:g} s (importing the framework, preparing the model)"
            ended.failure = Failure(status="timeout", reason=reason)
            return ended
        if started == "exited":
            ended.failure = _failed(worker, files, "worker exited while starting", oom_before)
            return ended
        if sample:
            config = SamplerConfig(
                out_csv=str(files.samples), interval_ms=trial.sample_interval_ms, sysfs_root=sysfs_root, pid=worker.pid
            )
            sampler = sampler_process(config, trial.sampler).start()
            idle_s = resolve_idle_s(trial, sysfs_root)
            if idle_s > 0:  # the worker waits for "go" with its model built: the device is idle
                ended.idle = wait_idle(idle_s)  # inside the timeout: --timeout bounds the whole trial
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()
        try:
            left_s = max(0.0, deadline - time.monotonic())
            if trial.memory_budget_bytes is None:
                worker.wait(left_s)
            else:
                watch = wait_within_budget(worker, left_s, trial.memory_budget_bytes, SysFS("/"))
                ended.watch = watch
            if worker.returncode != 0:
                ended.failure = _failed(worker, files, None, oom_before)
        except subprocess.TimeoutExpired:
            _kill(worker)
            steps = len(steps_of(read_events(files.events), measured_phase(trial.mode)))
            reason = f"exceeded the {trial.timeout_s:g} s timeout after {steps} measured steps"
            ended.failure = Failure(status="timeout", reason=reason)
        if sampler is not None:
            ended.sampler_meta = sampler.stop()
            sampler = None
        return ended
    finally:
        if sampler is not None:
            sampler.kill()
        if worker is not None:
            _kill(worker)


def _start_worker(trial: Trial, files: TrialFiles) -> subprocess.Popen[str]:
    threads = str(trial.threads)
    env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)
    args = [sys.executable, "-m", WORKER, str(files.spec), str(files.events), str(files.spans)]
    with open(files.stderr, "w") as stderr:
        return subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=env,
            start_new_session=True,  # Ctrl-C reaches the agent, which then stops the worker itself
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
    worker: subprocess.Popen[str],
    events_path: Path,
    stderr_path: Path,
    fallback: str | None,
    oom_before: OomCounts | None = None,
) -> tuple[Literal["oom", "crashed", "killed"], str]:
    """Status and one-line reason for a worker that did not finish cleanly.

    A SIGKILL is ``oom`` only on the kernel's evidence (``oom_before``: its OOM-kill counts before the worker
    started; see :mod:`edgebench.agents.python.oom`), else ``killed``.
    """
    for event in reversed(read_events(events_path)):
        if isinstance(event, Error):
            return event.status, event.reason
    code = worker.poll()
    stderr = stderr_path.read_text(errors="replace").strip().splitlines() if stderr_path.exists() else []
    # Native code that gives up on an allocation dies of a signal or an exit code, not a Python MemoryError.
    allocation = next((line.strip() for line in reversed(stderr) if is_allocation_failure(line)), None)
    if code is not None and code < 0:
        sig = signal.Signals(-code)
        if sig == signal.SIGKILL:
            after = OomCounts.read(SysFS("/")) if oom_before is not None else None
            return sigkill_cause(worker.pid, oom_before, after, kernel_oom_line(worker.pid))
        if allocation is not None:  # C++ ``std::bad_alloc`` ends in abort(): memory, not a crash of the code
            return "oom", f"out of memory: {allocation} (worker killed by {sig.name})"
        return "crashed", f"worker killed by {sig.name}"
    if allocation is not None:
        return "oom", f"out of memory: {allocation}"
    detail = stderr[-1] if stderr else fallback or f"worker exited with status {code}"
    return "crashed", detail


def _failed(
    worker: subprocess.Popen[str], files: TrialFiles, fallback: str | None, oom_before: OomCounts | None
) -> Failure:
    status, reason = _failure(worker, files.events, files.stderr, fallback, oom_before)
    return Failure(status=status, reason=reason)


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def main(argv: list[str] | None = None) -> int:
    """``python -m edgebench.agents.python.agent TRIAL_JSON|- [SYSFS_ROOT] [--no-sample]``: run one trial here (the
    trial as a JSON file, or its one line on stdin for ``-``) and print its bundle as one JSON document on stdout."""
    args = argv or sys.argv[1:]
    sample = "--no-sample" not in args
    source, *rest = [a for a in args if a != "--no-sample"]
    spec = sys.stdin.readline() if source == "-" else Path(source).read_text()
    trial = Trial.model_validate_json(spec)
    name_model(trial.model)  # the device side of a launch the user named its model for (see edgebench.workloads)
    bundle = run_agent(trial, sysfs_root=rest[0] if rest else "/", sample=sample)
    sys.stdout.write(bundle.model_dump_json() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
