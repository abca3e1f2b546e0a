"""The native sampler (``agents/native/sampler.c``) in the device-side script: built for arm64, armv7 and x86-64,
run (the arm builds under qemu-user) against the fixture trees of real phones and boards, its records must be the
sh sampler's record for record; it reads the workload's /proc files, stops on the script's word, and leaves nothing
behind when the workstation goes away or the script is killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edgebench.agents.native.build import TARGETS
from edgebench.agents.sh.native import SamplerChoice
from edgebench.agents.sh.run import DeviceRun, decode_samples, parse_device_output, plan_sampler, run_command_trial
from edgebench.agents.sh.run import script_for as make_script
from edgebench.host.sysfs import SysFS
from edgebench.records.trial import Trial
from edgebench.targets.shell import LocalShell
from tests.native import device_shell, native_sampler, runnable_here
from tests.paths import FIXTURES

#: Each tree with the shell its device samples under: Android's mksh, a board's busybox sh.
TREES = {"android_phone": ("mksh",), "pixel6": ("mksh",), "jetson_tx2": ("busybox", "sh"), "rpi4": ("busybox", "sh")}
#: A workload long enough for a dozen records at 10 ms, even under qemu on a busy machine.
WORKLOAD = "sleep 0.15"


def sampled(
    tree: Path | None, sh: tuple[str, ...], folder: Path, native: Path | None = None, workload: str = WORKLOAD
) -> DeviceRun:
    """The device-side script's run of ``workload`` on ``tree`` (None: this machine's own files), parsed."""
    sysfs = SysFS(tree or "/")
    plan = plan_sampler(sysfs, 10)
    sources = [(s.path, s.max_bytes, every) for s, (_, _, every) in zip(plan.sources, plan._files, strict=True)]
    script = make_script(
        command=workload, sources=sources, period_ms=10, workdir=str(folder / "run"), root=str(tree or ""),
        native=str(native) if native else None,
    )  # fmt: skip
    proc = LocalShell(device_shell(*sh)).start(script)  # stdin stays open: closing it is the workstation going away
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    out = proc.stdout.read()  # to its end: the script's cleanup ends its watchdog, the last holder of stdout
    assert proc.wait(120) == 0, proc.stderr.read().decode()
    proc.stdin.close()
    return parse_device_output(out.decode())


@pytest.fixture(scope="module")
def sh_records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, DeviceRun]:
    """Each fixture tree sampled once by the sh sampler, under its device's shell."""
    folder = tmp_path_factory.mktemp("sh")
    return {name: sampled(FIXTURES / "sysfs" / name, sh, folder / name) for name, sh in TREES.items()}


@pytest.mark.parametrize("abi", list(TARGETS))
@pytest.mark.parametrize("tree_name", list(TREES))
def test_native_records_are_the_sh_samplers_on_every_fixture_tree(abi, tree_name, sh_records, tmp_path):
    tree = FIXTURES / "sysfs" / tree_name
    native = sampled(tree, TREES[tree_name], tmp_path, runnable_here(abi, tmp_path))
    sh = sh_records[tree_name]
    assert (native.sampler, sh.sampler) == ("native", "sh")
    assert len(native.records) >= 3 and len(sh.records) >= 3
    # record for record, every source's lines (the tick decides which sources are due), and the last record, which
    # reads every source; timestamps differ, nothing else may
    ticks = min(len(native.records), len(sh.records)) - 1
    assert [r for _, r in native.records[:ticks]] == [r for _, r in sh.records[:ticks]]
    assert native.records[-1][1] == sh.records[-1][1]
    # the records hold the tree's files, not failures that would compare equal: every source is read at the end
    assert all(lines for lines in sh.records[-1][1].values()), sh.records[-1][1]
    plan = plan_sampler(SysFS(tree), 10)
    assert len(sh.records[-1][1]) == len(plan.sources)
    # and they decode to the same samples
    assert _values(decode_samples(plan, native))[:ticks] == _values(decode_samples(plan, sh))[:ticks]
    assert native.loop_cpu_ticks is not None and native.loop_start_ns is not None


def _values(csv: str) -> list[list[str]]:
    """The rows of a samples CSV without their timestamps."""
    return [row.split(",")[1:] for row in csv.strip().splitlines()]


def test_native_reads_the_workloads_proc_files_while_it_runs(tmp_path):
    """On this machine's own /proc: the workload's ``/proc/<pid>/stat`` (planned as /proc/self) is read once its pid is
    known and fails once it has exited, as the sh loop's reads do; the machine's counters are live."""
    native = sampled(None, ("mksh",), tmp_path, native_sampler("x86_64"))
    plan = plan_sampler(SysFS("/"), 10)
    rss = _values(decode_samples(plan, native))[0].index("proc_rss_bytes")
    rows = _values(decode_samples(plan, native))[1:]
    assert any(row[rss] for row in rows[:-1]), "the running workload's RSS was never read"
    assert rows[-1][rss] == "", "the last record, after the workload exited, read its /proc files"
    stat = next(i for i, s in enumerate(plan.sources) if s.path == "/proc/stat")
    assert native.records[0][1][stat] != native.records[-1][1][stat]  # re-read, not a copy of the first read


#: Two threads for a quarter of a second, no framework: the workload's task/ folder holds two schedstat files.
TWO_THREADS = (
    f"exec {sys.executable} -c 'import threading, time; t = threading.Thread(target=time.sleep, args=(0.25,)); "
    "t.start(); time.sleep(0.25); t.join()'"
)


@pytest.mark.parametrize("sampler", ["mksh", "busybox", "native"])
def test_each_sampler_reads_every_thread_of_the_workload_through_its_pattern_source(sampler, tmp_path):
    """``/proc/self/task/*/schedstat`` (the scheduler's counters, a pattern): each sampler lists the workload's
    threads at its ticks (every 50 ms: the records between hold none of it) and reads each one's line, so a record
    holds one line per thread while it runs and a failed read once it has exited; the lines decode to the threads'
    summed time on a CPU and waiting for one."""
    sh = ("busybox", "sh") if sampler == "busybox" else ("mksh",)
    native = native_sampler("x86_64") if sampler == "native" else None
    run = sampled(None, sh, tmp_path, native, workload=TWO_THREADS)
    assert run.sampler == ("native" if native else "sh")
    plan = plan_sampler(SysFS("/"), 10)
    sched = next(i for i, s in enumerate(plan.sources) if s.path == "/proc/self/task/*/schedstat")
    lines = [r[sched] for _, r in run.records if sched in r]
    assert any(found is not None and len(found) == 2 for found in lines), lines  # both threads, once both ran
    assert all(len(row.split()) == 3 for found in lines if found for row in found)
    assert lines[-1] is None  # the workload gone: a failed read, as for a single file
    rows = _values(decode_samples(plan, run))
    wait = rows[0].index("proc_run_queue_wait_ns")
    on_cpu = rows[0].index("proc_on_cpu_ns")
    assert any(row[on_cpu] and int(row[on_cpu]) > 0 and row[wait] for row in rows[1:])


def test_a_native_sampler_that_cannot_run_leaves_the_sh_loop_to_sample(tmp_path):
    """A binary that ends before its first record (a build the device cannot run): the script's own loop samples,
    and the result says so and why."""
    trial = Trial(command="sleep 0.2; echo step; echo step", step_pattern="^step$", model="demo", steps=1, warmup=1)
    shell = LocalShell(device_shell("mksh"), workdir=tmp_path)
    choice = SamplerChoice("native", "a build that cannot run", path="/bin/false")
    bundle = run_command_trial(trial, shell, sysfs=SysFS("/"), sampler_choice=choice)
    assert bundle.failure is None, bundle.failure
    assert bundle.sampler_meta is not None and bundle.sampler_meta.kind == "sh"
    assert "ended before its first record" in (bundle.sampler_meta.why or "")
    assert bundle.sampler_meta.samples >= 2


def _session_left(proc: subprocess.Popen[bytes]) -> list[str]:
    """The command lines of what still runs in the script's session (the shell's forks share its long one)."""
    found = subprocess.run(["ps", "-ww", "-o", "args=", "-s", str(proc.pid)], capture_output=True, text=True)
    return [row for row in found.stdout.strip().splitlines() if "<defunct>" not in row]


def _native_left(proc: subprocess.Popen[bytes]) -> list[str]:
    return [row for row in _session_left(proc) if row.split(" ", 1)[0].endswith("/edgebench-sampler")]


def _started(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    """A script sampling this machine with the native sampler around ``sleep 300``: its process and the workload's
    pid, once the native sampler has taken its first record."""
    plan = plan_sampler(SysFS("/"), 10)
    sources = [(s.path, s.max_bytes, 1) for s in plan.sources]
    script = make_script(command="sleep 300", sources=sources, period_ms=10, workdir=str(tmp_path / "run"),
                         native=str(native_sampler("x86_64")))  # fmt: skip
    proc = LocalShell(device_shell("mksh")).start(script)
    assert proc.stdout is not None
    lines: list[str] = []
    while not lines or not lines[-1].startswith("P "):
        lines.append(proc.stdout.readline().decode())
        assert lines[-1], f"the script ended early: {lines}"
    assert "S native\n" in lines
    return proc, int(lines[-1][2:]), tmp_path / "run"


def _gone(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().split(") ")[-1][:1] == "Z"


def _wait(condition, timeout_s: float = 15) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


def test_the_workstation_going_away_leaves_no_native_sampler(tmp_path):
    """stdin closed (a dropped ssh or adb connection): the script's cleanup stops the native sampler with its last
    record, keeps the records beside the run folder, and nothing of its session is left running."""
    proc, pid, run = _started(tmp_path)
    assert _native_left(proc)
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(20)
    assert _wait(lambda: _gone(pid) and not _session_left(proc)), _session_left(proc)
    assert not run.exists()
    kept = (tmp_path / "run.samples").read_text()
    assert kept.startswith("T ") and "\nL " in kept  # the native sampler's last record and its own cost


def test_a_script_killed_outright_leaves_no_native_sampler(tmp_path):
    """SIGKILL runs no trap: the native sampler sees its script gone, kills the workload and removes the run folder,
    as the sh loop does; the watchdog ends when the connection closes."""
    proc, pid, run = _started(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.wait(20)
    assert _wait(lambda: _gone(pid) and not _native_left(proc))
    assert _wait(lambda: not run.exists())
    assert proc.stdin is not None
    proc.stdin.close()
    assert _wait(lambda: not _session_left(proc)), _session_left(proc)


def test_run_command_with_sampler_native_here(cli, tmp_path):
    """``--sampler native`` on this machine: the x86-64 build samples, and the result names it and its build (without
    the flag this machine's command trials keep the sh loop: tests/unit/command/test_native.py)."""
    native_sampler("x86_64")  # built (or failing with the install line) before the command needs it
    record = cli.json(
        "run", "--command", "for i in 1 2 3 4; do sleep 0.1; echo step; done", "--step-pattern", "^step$",
        "--steps", "2", "--warmup", "1", "--sampler", "native", "--json",
    )  # fmt: skip
    assert record["status"] == "ok", record["reason"]
    assert record["sampler"]["kind"] == "native"
    assert record["sampler"]["why"].startswith("x86_64-linux-musl build")
    assert record["sampler"]["samples"] >= 10


def test_a_model_trial_here_with_sampler_native(tmp_path):
    """``--sampler native`` on edgebench's own workload: the Python agent runs the native sampler (its raw records,
    the Python sampler's format) around the worker; its stamps and the worker's step events share CLOCK_MONOTONIC."""
    from edgebench.launch.trial import run_trial
    from edgebench.targets.local import LocalTarget

    native_sampler("x86_64")
    trial = Trial(model="lenet", backend="fake", batch_size=4, steps=3, warmup=1, infer_steps=0, idle_s=0,
                  sampler="native")  # fmt: skip
    run = run_trial(trial, target=LocalTarget())
    assert run.result.ok, run.result.reason
    sampler = run.result.sampler
    assert sampler is not None and sampler.kind == "native", sampler
    assert sampler.why == "x86_64-linux-musl build for this machine's x86_64"
    assert sampler.cpu_pct_of_core > 0 and "nvml" in sampler.unavailable
    header, *rows = run.samples_csv.strip().splitlines()
    rss = header.split(",").index("proc_rss_bytes")
    assert any(row.split(",")[rss] for row in rows), "the worker's /proc/<pid>/stat was never read"
    stamps = [int(row.split(",", 1)[0]) for row in rows]
    steps = [e for e in run.events if e.event == "step"]
    assert stamps[0] <= steps[0].start_ns and stamps[-1] >= steps[-1].end_ns  # one clock, around every step


def test_a_script_that_exits_right_after_asking_for_the_last_record_still_gets_it(tmp_path):
    """Seen in a suite run under load: the script's cleanup sends the native sampler SIGTERM and exits at once; the
    sampler's check for a script killed outright came before its last record, took that exit for a kill, and
    ended without the "L" line (its own CPU time).  A stop asked for is now answered first."""
    sampler = native_sampler("x86_64")
    start = f"{sampler} uptime 10 '' $$ /proc/stat:4096:1 > samples & echo $!; read -r _"
    script = subprocess.Popen(["sh", "-c", start], cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert script.stdout is not None
    pid = int(script.stdout.readline())
    assert _wait(lambda: (tmp_path / "samples").exists() and (tmp_path / "samples").stat().st_size > 0)
    os.kill(pid, signal.SIGTERM)
    script.kill()  # the script gone before the sampler has taken its last record
    script.wait(10)
    assert _wait(lambda: _gone(pid))
    assert "\nL " in (tmp_path / "samples").read_text()
