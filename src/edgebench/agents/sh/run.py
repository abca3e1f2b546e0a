"""Run a ``--command`` trial through a device's shell (:class:`AgentShell`, which a target hands over) and bundle it.

The device side is one POSIX ``sh`` script (``sampler.sh``): it starts the workload, samples the files the local
sensors read at the trial's period, and stamps every sample and every line the workload prints on one clock of
the device.  It samples with its own loop, or with the native sampler where one was placed on the device
(:mod:`edgebench.agents.sh.native`), which writes the same records for a fraction of the CPU.  The workstation side
plans which files to read with the very sensors a local trial uses (a
:class:`~edgebench.sensors.sampler.Sampler` built without opening anything), and decodes the recorded file
contents with the same :meth:`Sensor.decode` parsers, so a command trial's samples mean what a local trial's do.
Steps come from the output through the trial's step pattern; the result is the same
:class:`~edgebench.records.bundle.TrialBundle` the Python agent gives.

Clock: where the shell has ``EPOCHREALTIME`` (mksh, busybox ash) stamps have microsecond resolution but are wall
clock; the script reads it beside ``/proc/uptime`` (the device's monotonic clock, 10 ms steps) at the start and
the end, and every stamp is moved onto the monotonic clock by the first pair (placed within 10 ms, intervals
exact).  The two pairs' disagreement (``command_clock_drift_ms``) shows a step of the wall clock during the trial.
Elsewhere (dash) the stamps are ``/proc/uptime`` itself.  The bundle's environment names the clock used
(``command_clock``).
"""

from __future__ import annotations

import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Collection
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from edgebench.agents.sh.counting import CounterTool, Readings, counted_command, parse_launcher, parse_stat
from edgebench.agents.sh.native import SamplerChoice
from edgebench.backends.command.patterns import PatternTimeout, StepPattern, Summary, step_pattern
from edgebench.backends.command.push import parse_push, remote_path
from edgebench.backends.command.shell import in_place
from edgebench.host.files import below
from edgebench.host.sysfs import SysFS
from edgebench.records.bundle import Failure, TrialBundle
from edgebench.records.events import UNWATCHED_ENV, Done, Event, FirstStep, Ready, Step
from edgebench.records.sampling import SamplerMeta
from edgebench.records.trial import Trial
from edgebench.sensors.sampler import DEFAULT_SENSORS, SKIPPED, Sampler, SamplerConfig


class AgentShell(Protocol):
    """What the ``sh`` agent needs of a device's shell; a target's shell (``targets.shell.Shell``) is one.  Declared
    here so that the agent depends on no transport: the launcher joins the two."""

    def run(
        self, script: str, *, timeout_s: float | None = None, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]: ...
    def start(self, script: str) -> subprocess.Popen[bytes]: ...
    def push(self, local: Path, remote: str) -> None: ...
    def workdir(self) -> str: ...


#: The pid the sensors of the workload are planned with: the script puts the workload's pid in its place.
WORKLOAD_PID = "self"
#: USER_HZ, the unit of /proc/stat and /proc/<pid>/stat times: 100 on every Linux ABI (Android included).
CLK_TCK = 100
#: How long a dropped device is waited for to fetch the samples it kept (an adb server reconnects a TCP device
#: 5-11 s after a drop).
RECOVER_S = 40.0
#: The last line of that fetch: without it the fetch itself was cut (the real adb client exits 0 on a drop).
_RECOVERED = "edgebench-recovered"
#: Sensors ``sh`` cannot read: NVML is a library, not a file.
SH_UNREADABLE = {"nvml": "NVML is a C library, not a file a device-side sh can read"}


def sampler_script() -> str:
    return resources.files("edgebench.agents.sh").joinpath("sampler.sh").read_text()


#: Sensors the device-side samplers read beside a local trial's: the scheduler's counters of the workload's threads
#: (an edgebench worker reads its own at its window's edges; a command's are sampled every 50 ms).
SH_EXTRA = ("sched",)


#: The sensors that read the workload's own ``/proc/<pid>`` (its CPU time, memory and scheduler counters).
PROCESS_SENSORS = ("process", "process_memory", "sched")


def plan_sampler(sysfs: SysFS, interval_ms: float, unwatched: str | None = None) -> Sampler:
    """The sensors a local trial would use on ``sysfs`` (and :data:`SH_EXTRA`), planned (nothing opened) for the
    device-side script.  ``unwatched``: why the pid the script starts is not the workload's own (then no sensor
    reads it, and the result says why)."""
    names = tuple(n for n in DEFAULT_SENSORS if n not in SH_UNREADABLE) + SH_EXTRA
    if unwatched:
        names = tuple(n for n in names if n not in PROCESS_SENSORS)
    # The process sensors are planned on /proc/self; the script reads the workload's /proc/<pid> in its place.
    config = SamplerConfig(
        out_csv="", interval_ms=interval_ms, sysfs_root=str(sysfs.root), sensors=names,
        pid=WORKLOAD_PID,  # type: ignore[arg-type]
    )  # fmt: skip
    sampler = Sampler(config, sysfs=sysfs, open_files=False)
    sampler.meta.unavailable.update({n: r for n, r in SH_UNREADABLE.items() if n in DEFAULT_SENSORS})
    if unwatched:
        sampler.meta.unavailable.update({n: unwatched for n in PROCESS_SENSORS})
    return sampler


def script_for(
    *, command: str, cwd: str | None = None, sources: list[tuple[str, int, int]], period_ms: float, workdir: str,
    root: str = "",
    clock: str = "auto", sample: bool = True, stamp_file: str | None = None, native: str | None = None,
) -> str:  # fmt: skip
    """The device-side script: its settings as shell assignments, then ``sampler.sh``; ``native``: the native
    sampler's path on the device, which samples in place of the script's loop."""
    settings = {
        "EB_ROOT": root.rstrip("/"),
        "EB_PERIOD_MS": str(max(1, round(period_ms))),
        "EB_WORK": workdir,
        "EB_CWD": cwd or workdir,
        "EB_CMD": command,
        "EB_SOURCES": " ".join(f"{path}:{size}:{every}" for path, size, every in sources),
        "EB_CLOCK": clock,
        "EB_SAMPLE": "1" if sample else "0",
        "EB_STAMP": stamp_file or "",
        "EB_NATIVE": native or "",
    }
    head = "".join(f"{k}={shlex.quote(v)}\n" for k, v in settings.items())
    return head + sampler_script()


def stamp_ns(text: str) -> int:
    """``12345.678901`` (seconds, any number of decimals) as integer nanoseconds, exactly."""
    seconds, _, frac = text.partition(".")
    return int(seconds) * 1_000_000_000 + int((frac + "000000000")[:9])


@dataclass
class DeviceRun:
    """What the device-side script printed, parsed: clock, workload pid and exit, stamped lines, raw records."""

    clock: str = ""
    #: Which loop sampled (``S`` line): ``native`` or ``sh``; "" where the script sampled nothing.
    sampler: str = ""
    pid: int | None = None
    go_ns: int | None = None
    exit_ns: int | None = None
    status: int | None = None
    lines: list[tuple[int, str]] = field(default_factory=list)
    records: list[tuple[int, dict[int, list[str] | None]]] = field(default_factory=list)
    stamp_text: str | None = None
    loop_cpu_ticks: int | None = None
    loop_start_ns: int | None = None
    loop_end_ns: int | None = None
    #: ``(uptime_ns, wall_ns)`` pairs read together on the device (see ``sampler.sh``'s ``anchor``).
    anchors: list[tuple[int, int]] = field(default_factory=list)

    def on_monotonic(self) -> DeviceRun:
        """This run with every wall-clock stamp moved onto the device's monotonic clock by the first anchor."""
        if self.clock != "epochrealtime" or not self.anchors:
            return self
        up, wall = self.anchors[0]
        shift = up - wall

        def moved(t: int | None) -> int | None:
            return None if t is None else t + shift

        return replace(
            self,
            clock="epochrealtime on uptime",
            go_ns=moved(self.go_ns),
            exit_ns=moved(self.exit_ns),
            lines=[(t + shift, body) for t, body in self.lines],
            records=[(t + shift, sources) for t, sources in self.records],
            loop_start_ns=moved(self.loop_start_ns),
            loop_end_ns=moved(self.loop_end_ns),
        )

    def clock_drift_ms(self) -> float | None:
        """How far the wall clock moved against the monotonic one between the first and last anchor (10 ms steps
        of ``/proc/uptime`` make up to 10 ms of this the uptime clock's resolution, not a step)."""
        if len(self.anchors) < 2:
            return None
        (up0, wall0), (up1, wall1) = self.anchors[0], self.anchors[-1]
        return ((wall1 - wall0) - (up1 - up0)) / 1e6


def parse_device_output(text: str) -> DeviceRun:
    """Read the script's stdout (see ``sampler.sh`` for the line format); a torn last record is kept as read."""
    run = DeviceRun()
    section = "main"
    stamp: list[str] = []
    current: dict[int, list[str] | None] | None = None
    for line in text.split("\n"):
        line = line.removesuffix("\r")  # an old phone's shell (no shell protocol) runs on a pty: CR LF
        if section == "main":
            kind, _, rest = line.partition(" ")
            if kind == "O":
                t, _, body = rest.partition(" ")
                run.lines.append((stamp_ns(t), body))
            elif kind == "C":
                run.clock = rest
            elif kind == "S":
                run.sampler = rest
            elif kind == "A":
                up, _, wall = rest.partition(" ")
                run.anchors.append((stamp_ns(up), stamp_ns(wall)))
            elif kind == "P":
                run.pid = int(rest)
            elif kind == "G":
                run.go_ns = stamp_ns(rest)
            elif kind == "X":
                t, _, code = rest.partition(" ")
                run.exit_ns, run.status = stamp_ns(t), int(code)
            elif line == "@stamp":
                section = "stamp"
            elif line == "@samples":
                section = "samples"
        elif section == "stamp":
            if line == "@samples":
                section = "samples"
            elif line == "@endstamp":
                section = "main"
            else:
                stamp.append(line)
        else:
            if line.startswith("T "):
                current = {}
                run.records.append((stamp_ns(line[2:]), current))
            elif line.startswith("L "):
                ticks, start, end = line[2:].split()
                run.loop_cpu_ticks, run.loop_start_ns, run.loop_end_ns = int(ticks), stamp_ns(start), stamp_ns(end)
            elif current is not None and line:
                head, bar, body = line.partition("|")
                if bar:
                    lines = current.setdefault(int(head), [])
                    if lines is not None:
                        lines.append(body)
                elif head.endswith("!"):
                    current[int(head[:-1])] = None
    run.stamp_text = "\n".join(stamp) if stamp else None
    return run.on_monotonic()


def record_blobs(n_sources: int, sources: dict[int, list[str] | None]) -> list[bytes | None]:
    """One device record as the local sampler's raw record holds it: each source's bytes, None for a failed read,
    :data:`SKIPPED` for one not due."""
    blobs: list[bytes | None] = []
    for i in range(n_sources):
        if i not in sources:
            blobs.append(SKIPPED)
            continue
        lines = sources[i]
        blobs.append(None if lines is None else "".join(f"{x}\n" for x in lines).encode())
    return blobs


def decode_samples(sampler: Sampler, run: DeviceRun) -> str:
    """The CSV a local sampler would have written, from the device's records, through the same decoders."""
    n = len(sampler.sources)
    rows = [",".join(["t_ns", *sampler.meta.columns])]
    for t_ns, sources in run.records:
        values = sampler.decode_record(record_blobs(n, sources))
        rows.append(",".join([str(t_ns), *("" if v is None else str(v) for v in values)]))
    return "\n".join(rows) + "\n"


def steps_from_output(
    trial: Trial, pattern: StepPattern, run: DeviceRun
) -> tuple[list[Step], dict[str, Any], str | None]:
    """Warm-up and measured steps from the stamped output, extra fields for the environment, or why none."""
    start = run.go_ns or 0
    if pattern.regex is None:
        summary = pattern.read_summary([body for _, body in run.lines], run.stamp_text)
        if summary is None:
            return [], {}, f"its output has no {pattern.name} summary line ({pattern.description})"
        told = {"step_times": "mean only", "step_count": summary.count if summary.count else "not printed"}
        return _summary_steps(summary, run), {**told, **summary.extra}, None
    steps: list[Step] = []
    groups: dict[str, list[float | str]] = {}
    for t_ns, body in run.lines:
        try:
            found = pattern.step_fields(body)
        except PatternTimeout as exc:  # the user's regex, not the workload, ran away
            return [], {}, (f"its --step-pattern {exc} (it backtracks without end): simplify it, or pip install "
                            "'edgebench[re2]' for a linear-time engine")  # fmt: skip
        if found is None:
            continue
        index = len(steps)
        if index >= trial.warmup + trial.steps:
            break
        loss = found.pop("loss", None)
        for name, value in found.items():
            groups.setdefault(name, []).append(value)
        own_ms = found.get(pattern.duration_group) if pattern.duration_group else None
        if isinstance(own_ms, float):  # the tool's own time of the step, ending at its line
            start = t_ns - round(own_ms * 1e6)
        warm, measured = ("infer_warmup", "infer") if trial.mode == "infer" else ("warmup", "train")
        phase = warm if index < trial.warmup else measured
        steps.append(
            Step(phase=phase, index=index if phase == warm else index - trial.warmup, start_ns=start,
                 end_ns=t_ns, loss=loss if isinstance(loss, float) else None)
        )  # fmt: skip
        start = t_ns
    measured = len(steps) - trial.warmup
    if measured < 1:
        return (
            steps,
            {},
            (
                f"its output has {len(steps)} line(s) matching --step-pattern {trial.step_pattern!r}; "
                f"{trial.warmup} warm-up + at least 1 measured step needed"
            ),
        )
    extra: dict[str, Any] = {"step_groups": groups} if groups else {}
    if pattern.duration_group:
        extra["step_times"] = f"the tool's own ({pattern.name}'s {pattern.duration_group} group), ending at each line"
    return steps, extra, None


def _summary_steps(summary: Summary, run: DeviceRun) -> list[Step]:
    """Equal steps of the reported mean, ending when the summary was printed: the tool gives nothing finer.  A tool
    that prints no count (the MNN demo) gives one: its mean, one figure, never the trial's ``steps`` it did not
    run by."""
    count = summary.count or 1
    step_ns = round(summary.mean_step_ms * 1e6)
    end = next((t for t, body in run.lines if str(summary.mean_step_ms) in body or "latency" in body), None)
    end = end or run.exit_ns or 0
    first = end - count * step_ns
    return [Step(phase="train", index=i, start_ns=first + i * step_ns, end_ns=first + (i + 1) * step_ns)
            for i in range(count)]  # fmt: skip


#: Why the process sensors watch nothing: the pid the script starts is a shell, or the counting tool, with the
#: program somewhere below it.
COMPOUND = ("the command is not one simple command, so it runs as its shell and the shell's own CPU and memory are "
            "not the program's: end it with `exec PROGRAM ...` to measure the program")  # fmt: skip
COUNTED = "--counters runs the program under {tool}, whose own CPU and memory are not the program's"

#: The shell's exit status for a command it did not find (POSIX).
NOT_FOUND_STATUS = 127


def not_found_hint(command: str, status: int, pushed: Collection[str]) -> str:
    """Why a program named by a relative path was not found, where that is the likely answer: the command runs in
    the trial's own work folder (a temporary one here, the target's on a device), so ``./bench.sh`` of the current
    folder is not there unless ``--push`` copied it.  ``pushed``: the work-folder paths the pushes landed at.  Empty
    for any other status, a program found on ``PATH``, one outside the work folder, or one that was pushed (then
    something else is missing: its interpreter, a library)."""
    if status != NOT_FOUND_STATUS:
        return ""
    try:
        program = shlex.split(command)[0]
        name = below(program)  # ./bench.sh -> bench.sh, as a push's REMOTE is normalised
    except (ValueError, IndexError):  # unparsable, empty, absolute or climbing out
        return ""
    if "/" not in program or name in pushed:
        return ""
    return f" (the command runs in the trial's work folder, not in the current one: --push {name} copies it there)"


def _read_all(proc: Any, chunks: list[bytes]) -> threading.Thread:
    def pump() -> None:
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.read1(65536), b""):
            chunks.append(chunk)

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


def run_command_trial(
    trial: Trial, shell: AgentShell, *, sysfs: SysFS, root: str = "", env: dict[str, Any] | None = None,
    sample: bool = True, clock: str = "auto", counting: CounterTool | None = None,
    sampler_choice: SamplerChoice | None = None,
) -> TrialBundle:  # fmt: skip
    """Push the trial's files, run its command with the device-side sampler, and bundle what was measured.

    ``sysfs`` is the device's ``/proc`` and ``/sys`` as the workstation sees it (to plan the sensors); ``root``
    prefixes every sampled path on the device (a fixture tree under ``--sysfs-root``).  ``counting``: the tool that
    counts the trial's ``--counters`` over the command's process tree (the target chose it; see
    :mod:`edgebench.agents.sh.counting`).  ``sampler_choice``: the native sampler placed on the device, or why the
    script's own sh loop samples (:mod:`edgebench.agents.sh.native`; None: the sh loop).
    """
    assert trial.command is not None and trial.step_pattern is not None
    pattern = step_pattern(trial.step_pattern)
    workdir = shell.workdir()
    pushed: list[str] = []
    for spec in trial.push:
        local, remote = parse_push(spec)
        shell.push(local, remote_path(workdir, remote))
        pushed.append(remote)
    command = in_place(trial.command)
    unwatched = None if command else COMPOUND
    run_dir = f"{workdir.rstrip('/')}/run-{time.time_ns()}"
    counts_path = f"{run_dir}.counters"  # beside the run folder, which the script removes when it ends
    if trial.counters and counting is not None:
        command = counted_command(counting, trial.command, trial.counters, counts_path)
        unwatched = COUNTED.format(tool=counting)
    sampler = plan_sampler(sysfs, trial.sample_interval_ms, unwatched)
    sources = [(s.path, s.max_bytes, every) for s, (_, _, every) in zip(sampler.sources, sampler._files, strict=True)]
    command = command or trial.command
    script = script_for(
        command=command, cwd=workdir, sources=sources, period_ms=trial.sample_interval_ms,
        workdir=run_dir, root=root, clock=clock, sample=sample,
        stamp_file=f"{workdir.rstrip('/')}/{pattern.stamp_file}" if pattern.stamp_file else None,
        native=sampler_choice.path if sampler_choice else None,
    )  # fmt: skip
    # The 9 KB script travels as a file (adb sync, ssh's cat), never on the client's command line: old phones' shells
    # take no long command, and a device with a 4 KiB payload limit would abort the user's adb server.
    script_path = f"{run_dir}.sh"
    with tempfile.TemporaryDirectory(prefix="edgebench-script-") as tmp:
        local_script = Path(tmp) / "run.sh"
        local_script.write_text(script + f"rm -f {shlex.quote(script_path)}\n")
        shell.push(local_script, script_path)
    anchor_wall_ns = time.time_ns()
    proc = shell.start(f". {shlex.quote(script_path)}")
    chunks: list[bytes] = []
    reader = _read_all(proc, chunks)
    failure: Failure | None = None
    try:
        proc.wait(trial.timeout_s)
    except Exception:  # subprocess.TimeoutExpired: closing stdin makes the script kill everything it started
        failure = Failure(status="timeout", reason=f"exceeded the {trial.timeout_s:g} s timeout")
        _stop(proc)
    reader.join(10)
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    text = b"".join(chunks).decode(errors="replace")
    run = parse_device_output(text)
    drop = ""
    if run.status is None or (sample and "\n@samples\n" not in text):
        # ended early (a drop, a timeout): the records so far were kept on the device beside the run folder
        kept = recover_samples(shell, run_dir) if sample else None
        if kept:
            run = parse_device_output(text.rstrip("\n") + "\n@samples\n" + kept)
        drop = "the connection dropped" if kept is not None else "the device did not come back"
    steps, extra, why = steps_from_output(trial, pattern, run)
    readings = fetch_counts(shell, counts_path, counting, trial.counters) if trial.counters and counting else None
    if steps and readings is not None and readings.at_line and pattern.regex is not None:
        steps = steps_with_counts(steps, pattern, run, readings)
    if failure is None:
        if run.status is None:
            # Debian's adb client exits 0 with nothing on stderr when the device goes away: the missing exit line
            # of the script is what tells a drop
            reason = err.splitlines()[-1] if err else f"{drop} (client exit status {proc.returncode})"
            failure = Failure(status="crashed", reason=f"connection or shell ended mid-trial: {reason}")
        elif run.status != 0:
            last = run.lines[-1][1] if run.lines else "no output"
            failure = Failure(status="crashed", reason=f"the command exited with status {run.status}: {last}"
                              + not_found_hint(trial.command, run.status, pushed))  # fmt: skip
        elif why:
            failure = Failure(status="crashed", reason=f"the command ran but {why}")
    spans_json = None
    if failure is None and trial.trace != "none" and pattern.spans:
        spans_json, why_none = read_spans(trial, pattern, run, steps, shell)
        if why_none:  # the steps stand; the trial says why it has no layers
            extra["command_spans"] = why_none
    if unwatched:
        extra[UNWATCHED_ENV] = unwatched
    events: list[Event] = [
        Ready(pid=run.pid, env={"command": trial.command, "command_clock": run.clock, **extra}),
        *steps,
    ]
    if steps and run.go_ns is not None and pattern.regex is not None:  # the tool's start to its first step line
        events.append(FirstStep(mode=trial.mode, start_ns=steps[0].start_ns, end_ns=steps[0].end_ns,
                                counted_as=steps[0].phase))  # fmt: skip
    if failure is None:
        events.append(Done(stopped_by=None, counters=readings.window() if readings else None))
    meta = _meta(sampler, run, anchor_wall_ns, sampler_choice) if sample and run.records else None
    return TrialBundle(
        trial=trial,
        events=events,
        samples_csv=decode_samples(sampler, run) if meta else None,
        sampler_meta=meta,
        spans_json=spans_json,
        env={
            **(env or {}),
            "command_clock": run.clock,
            "command_clock_drift_ms": run.clock_drift_ms(),
            **({"perf_counters_tool": counting} if trial.counters and counting else {}),
        },
        failure=failure,
    )


def read_spans(
    trial: Trial, pattern: StepPattern, run: DeviceRun, steps: list[Step], shell: AgentShell
) -> tuple[str | None, str | None]:
    """The span table (JSON) of a traced trial, from what the tool wrote (the pattern's reader; a file it names is
    read from the device and removed there), or None and why not."""
    from edgebench.registry import import_target

    def fetch(path: str) -> bytes | None:
        """A device file's bytes (as ``od`` prints them, which every device shell has), removed after reading."""
        quoted, where = shlex.quote(path), shlex.quote(shell.workdir())  # relative to where the command ran
        try:
            done = shell.run(f"cd {where} && od -An -v -tx1 {quoted} && rm -f {quoted}", timeout_s=120)
        except subprocess.SubprocessError:
            return None
        if done.returncode != 0:
            return None
        return bytes.fromhex(done.stdout.decode(errors="replace").replace("\n", " ").replace(" ", ""))

    assert pattern.spans is not None
    windows = [(s.start_ns, s.end_ns) for s in steps]
    table = import_target(pattern.spans)(trial, [body for _, body in run.lines], windows, fetch)
    return (None, table) if isinstance(table, str) else (table.to_json(), None)


def fetch_counts(shell: AgentShell, path: str, tool: CounterTool, names: tuple[str, ...]) -> Readings | None:
    """The counting tool's file, read and deleted on the device; None where it wrote none (the run was cut)."""
    try:
        done = shell.run(f"cat {shlex.quote(path)} 2>/dev/null; rm -f {shlex.quote(path)}", timeout_s=30)
    except subprocess.SubprocessError:
        return None
    text = done.stdout.decode(errors="replace")
    if tool == "launcher":
        return parse_launcher(text)
    readings, missing = parse_stat(tool, text, names)
    return None if missing else readings


def steps_with_counts(steps: list[Step], pattern: StepPattern, run: DeviceRun, readings: Readings) -> list[Step]:
    """Each step with the counts between the reading at the previous step line (the command's exec for the first)
    and the reading at its own line: the lines are numbered in the order both the launcher and the agent saw them."""
    matched = [i for i, (_, body) in enumerate(run.lines) if pattern.step_fields(body) is not None]
    out: list[Step] = []
    previous: int | None = None
    for step, i in zip(steps, matched, strict=False):
        counts = readings.between(previous, i + 1, last=i == len(run.lines) - 1)
        out.append(step.model_copy(update={"counters": counts}))
        previous = i + 1
    return out + steps[len(out) :]


def recover_samples(shell: AgentShell, run_dir: str, wait_s: float = RECOVER_S) -> str | None:
    """The sample records a run that ended early kept on the device (``RUN.samples``), fetched over a new
    connection and deleted there with the run's script and folder; "" when none were kept, None when the device
    did not answer within ``wait_s`` (the files then stay)."""
    kept = shlex.quote(f"{run_dir}.samples")
    script = (
        f"cat {kept} 2>/dev/null; rm -f {kept} {shlex.quote(run_dir + '.sh')} {shlex.quote(run_dir + '.counters')}; "
        f"rm -rf {shlex.quote(run_dir)}; "
        f"echo {_RECOVERED}"
    )
    deadline = time.monotonic() + wait_s
    while True:
        try:
            done = shell.run(script, timeout_s=30)
        except subprocess.SubprocessError:
            done = None
        if done is not None and done.stdout.rstrip().endswith(_RECOVERED.encode()):
            return done.stdout.decode(errors="replace").rstrip().removesuffix(_RECOVERED)
        if time.monotonic() >= deadline:
            return None
        time.sleep(1.0)


def _meta(sampler: Sampler, run: DeviceRun, anchor_wall_ns: int, choice: SamplerChoice | None) -> SamplerMeta:
    meta = SamplerMeta(**asdict(sampler.meta))
    meta.kind, meta.why = _which_sampled(run, choice)
    meta.clk_tck = CLK_TCK
    meta.samples = len(run.records)
    meta.anchor_wall_ns, meta.anchor_mono_ns = anchor_wall_ns, run.records[0][0]
    if run.loop_cpu_ticks is not None and run.loop_start_ns is not None and run.loop_end_ns is not None:
        meta.loop_cpu_s = run.loop_cpu_ticks / CLK_TCK
        meta.loop_wall_s = (run.loop_end_ns - run.loop_start_ns) / 1e9
    return meta


def _which_sampled(run: DeviceRun, choice: SamplerChoice | None) -> tuple[str, str | None]:
    """The loop the script says sampled, and why: the choice's reason, or why the native one it was given did not."""
    if choice is None:
        return "sh", None
    if choice.kind == "native" and run.sampler == "sh":
        return "sh", f"the native sampler ({choice.why}) ended before its first record; the script's loop sampled"
    return run.sampler or choice.kind, choice.why


def _stop(proc: Any) -> None:
    """Close the script's stdin (its watchdog then kills the workload and the sampler), then end the local end."""
    try:
        proc.stdin.close()
        proc.wait(10)
    except Exception:
        proc.kill()
        proc.wait()
