"""``--command`` trials: the device-side sh sampler under mksh, dash and busybox sh, the shipped step patterns on
real tool output, and ``edgebench run --command`` end to end on the local target."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from edgebench.agents.sh.run import parse_device_output, plan_sampler, run_command_trial, script_for
from edgebench.backends.command.patterns import NAMED_PATTERNS, step_pattern
from edgebench.errors import UsageError
from edgebench.host.sysfs import SysFS
from edgebench.measure.trial import build_result
from edgebench.records.trial import Trial
from edgebench.sensors.sampler import Sampler, SamplerConfig
from edgebench.sensors.samples import parse_samples
from edgebench.targets.shell import LocalShell
from tests.paths import FIXTURES

SHELLS = {"mksh": ("mksh",), "dash": ("dash",), "busybox": ("busybox", "sh")}
TREES = ("android_phone", "jetson_orin", "intel_laptop")


def shell_for(name: str) -> LocalShell:
    """The named shell, or a failure naming its install line: these are the shells devices run the sampler under."""
    if shutil.which(SHELLS[name][0]) is None:
        pytest.fail(f"{SHELLS[name][0]} is missing: apt-get install -y mksh busybox dash")
    return LocalShell(SHELLS[name])


def steps_command(n: int) -> str:
    return f"i=0; while [ $i -lt {n} ]; do echo step $i loss 0.$i; i=$((i+1)); sleep 0.01; done"


def trial(**overrides: object) -> Trial:
    values: dict[str, object] = dict(
        command=steps_command(6), step_pattern=r"step (?P<n>\d+) loss (?P<loss>[0-9.]+)", model="demo", steps=4,
        warmup=2, sample_interval_ms=10, threads=1, cores=(0,),
    )  # fmt: skip
    return Trial(**{**values, **overrides})


def local_values(tree: Path) -> dict[str, object]:
    """What the local Python sampler reads from ``tree`` in one poll, by column."""
    config = SamplerConfig(out_csv="", sysfs_root=str(tree), sensors=tuple(plan_sampler(SysFS(tree), 10).meta.sensors))
    sampler = Sampler(config)
    try:
        record = sampler.poll(every_source=True)
        (_, values), *_ = list(sampler.rows(io.BytesIO(record)))
        return dict(zip(sampler.meta.columns, values, strict=True))
    finally:
        sampler.close()


@pytest.fixture(scope="module", params=list(SHELLS))
def shell_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.mark.parametrize("tree_name", TREES)
def test_sh_sampler_records_parse_to_the_local_sensors_numbers(shell_name: str, tree_name: str, tmp_path: Path):
    tree = FIXTURES / "sysfs" / tree_name
    shell = LocalShell(shell_for(shell_name).sh, workdir=tmp_path)
    bundle = run_command_trial(trial(), shell, sysfs=SysFS(tree), root=str(tree))
    assert bundle.failure is None
    assert bundle.sampler_meta is not None and bundle.samples_csv is not None
    header, *rows = bundle.samples_csv.strip().splitlines()
    columns = header.split(",")[1:]
    expected = local_values(tree)
    assert columns == list(expected)  # the same sensors, the same columns, in the same order
    first = rows[0].split(",")[1:]  # the first record reads every source, as the local sampler's first poll does
    got = {c: (None if v == "" else float(v)) for c, v in zip(columns, first, strict=True)}
    assert got == {c: (None if v is None else float(v)) for c, v in expected.items()}
    assert any(v is not None for v in got.values())
    assert len(rows) >= 2 and bundle.sampler_meta.samples == len(rows)
    times = [int(r.split(",", 1)[0]) for r in rows]
    assert times == sorted(times)


def test_steps_and_samples_share_the_device_clock(shell_name: str, tmp_path: Path):
    shell = LocalShell(shell_for(shell_name).sh, workdir=tmp_path)
    bundle = run_command_trial(trial(), shell, sysfs=SysFS("/"))
    assert bundle.failure is None
    steps = [e for e in bundle.events if e.event == "step"]
    assert [s.phase for s in steps] == ["warmup"] * 2 + ["train"] * 4
    assert [s.loss for s in steps] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    assert bundle.events[0].env["step_groups"] == {"n": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}
    clock = {"mksh": "epochrealtime on uptime", "busybox": "epochrealtime on uptime", "dash": "uptime"}[shell_name]
    assert bundle.env["command_clock"] == clock
    # every stamp is on the device's monotonic clock (CLOCK_BOOTTIME, what /proc/uptime counts), not the wall clock
    assert abs(steps[-1].end_ns - time.clock_gettime_ns(time.CLOCK_BOOTTIME)) < 60e9
    if clock != "uptime":
        assert abs(bundle.env["command_clock_drift_ms"]) < 20  # no wall-clock step: uptime's 10 ms steps at most
    sample_times = [int(r.split(",", 1)[0]) for r in bundle.samples_csv.strip().splitlines()[1:]]
    # the samples bracket the steps on one clock: the first before the first step, the last after the last
    assert sample_times[0] <= steps[0].start_ns and sample_times[-1] >= steps[-1].end_ns
    assert all(s.start_ns <= s.end_ns for s in steps)
    # a loop is no one program: it runs as its shell, whose CPU and memory are not the workload's, so nothing
    # watches its /proc/<pid> and the result says why
    assert bundle.events[0].pid is not None and "proc_rss_bytes" not in bundle.sampler_meta.columns
    assert "exec PROGRAM" in bundle.sampler_meta.unavailable["process"]
    result = build_result(bundle.trial, "t1", bundle.events, parse_samples(bundle.samples_csv, bundle.sampler_meta),
                          bundle.env)  # fmt: skip
    assert result.memory.peak_bytes is None and result.cpu.process_pct is None
    assert any(n.startswith("no CPU share, memory or scheduler waits of the program: the command is not one simple")
               for n in result.measurement_notes), result.measurement_notes  # fmt: skip


def test_a_simple_command_is_the_process_its_sensors_watch(shell_name: str, tmp_path: Path):
    """Tried: `run --command ./bench.sh` stored 1.4 MiB peak memory and no CPU: dash, Debian's sh, forks even a
    lone command and waits, and the sensors watched the waiting `sh -c`.  A simple command is now exec'd in its
    place (under every shell), so the pid watched is the program's: its CPU time grows with the work it does."""
    (tmp_path / "bench.sh").write_text(
        "i=0; while [ $i -lt 6 ]; do j=0; while [ $j -lt 20000 ]; do j=$((j+1)); done; echo step $i loss 0.$i; "
        "i=$((i+1)); done\n"
    )
    shell = LocalShell(shell_for(shell_name).sh, workdir=tmp_path)
    bundle = run_command_trial(trial(command="sh bench.sh"), shell, sysfs=SysFS("/"))
    assert bundle.failure is None and "proc_utime_ticks" in bundle.sampler_meta.columns
    samples = parse_samples(bundle.samples_csv, bundle.sampler_meta)
    ticks = samples.columns["proc_utime_ticks"] + samples.columns["proc_stime_ticks"]
    assert np.nanmax(ticks) >= 5, ticks  # the loop's own CPU (the waiting `sh -c` had none)


def test_a_failing_command_is_crashed_with_its_last_line(tmp_path: Path):
    shell = LocalShell(shell_for("mksh").sh, workdir=tmp_path)
    bundle = run_command_trial(trial(command="echo step 0 loss 1; echo boom >&2; exit 3"), shell, sysfs=SysFS("/"))
    assert bundle.failure is not None and bundle.failure.status == "crashed"
    assert "status 3" in bundle.failure.reason and "boom" in bundle.failure.reason


def test_too_few_step_lines_say_how_many_matched(tmp_path: Path):
    shell = LocalShell(shell_for("dash").sh, workdir=tmp_path)
    bundle = run_command_trial(trial(command="echo step 0 loss 1"), shell, sysfs=SysFS("/"))
    assert bundle.failure is not None and "1 line(s) matching" in bundle.failure.reason


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ")[-1][:1] != "Z"


@pytest.mark.parametrize("name", list(SHELLS))
def test_closing_the_connection_leaves_no_device_process(name: str, tmp_path: Path):
    """The workstation going away (stdin closed, as a dropped ssh or adb does) kills workload and sampler."""
    shell = shell_for(name)
    plan = plan_sampler(SysFS("/"), 10)
    sources = [(s.path, s.max_bytes, 1) for s in plan.sources]
    script = script_for(command="sleep 300", sources=sources, period_ms=10, workdir=str(tmp_path / "run"))
    proc = shell.start(script)
    assert proc.stdout is not None
    lines = []
    while not any(line.startswith("P ") for line in lines):
        lines.append(proc.stdout.readline().decode())
    pid = int(next(line for line in lines if line.startswith("P "))[2:])
    assert _running(pid)
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(20)
    deadline = time.monotonic() + 10
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid)

    def leftover() -> list[str]:
        found = subprocess.run(["ps", "-o", "pid=,args=", "-s", str(proc.pid)], capture_output=True, text=True)
        return found.stdout.strip().splitlines()

    while leftover() and time.monotonic() < deadline:  # a sleep of the sampler's last tick ends within a period
        time.sleep(0.05)
    assert leftover() == []  # nothing of the script's session (the sampler loop, its sleeps) is left
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("name", list(SHELLS))
def test_a_script_killed_outright_leaves_no_device_process(name: str, tmp_path: Path):
    """A SIGKILL runs no trap (a Ray node or an adb server killed with the script): the sampler loop, seeing its
    script gone, stops the workload and itself, and the watchdog does so once the connection closes."""
    shell = shell_for(name)
    plan = plan_sampler(SysFS("/"), 10)
    sources = [(s.path, s.max_bytes, 1) for s in plan.sources]
    script = script_for(command="sleep 300", sources=sources, period_ms=10, workdir=str(tmp_path / "run"))
    proc = shell.start(script)
    assert proc.stdout is not None and proc.stdin is not None
    line = ""
    while not line.startswith("P "):
        line = proc.stdout.readline().decode()
    pid = int(line[2:])
    proc.kill()
    proc.wait(20)
    deadline = time.monotonic() + 10

    def leftover() -> list[str]:
        found = subprocess.run(["ps", "-o", "pid=,args=", "-s", str(proc.pid)], capture_output=True, text=True)
        return [row for row in found.stdout.strip().splitlines() if "<defunct>" not in row]

    while (_running(pid) or len(leftover()) > 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid)
    assert len(leftover()) <= 1  # at most the watchdog, blocked on the still open connection
    proc.stdin.close()
    while leftover() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftover() == []
    assert not (tmp_path / "run").exists()


def test_wall_clock_stamps_move_onto_the_monotonic_clock_and_a_step_shows():
    text = "\n".join([
        "C epochrealtime", "A 100.00 1795000000.000000", "G 1795000000.500000", "O 1795000001.250000 step 0",
        "X 1795000002.000000 0", "A 102.00 1795000003.000000", "@samples", "T 1795000000.600000", "0|cpu 1 2 3",
    ])  # fmt: skip
    run = parse_device_output(text)
    assert run.clock == "epochrealtime on uptime"
    assert (run.go_ns, run.exit_ns) == (100_500_000_000, 102_000_000_000)
    assert run.lines == [(101_250_000_000, "step 0")] and run.records[0][0] == 100_600_000_000
    assert run.clock_drift_ms() == 1000.0  # the wall clock moved 3 s while the monotonic one moved 2 s


def test_parse_device_output_keeps_failed_and_skipped_sources():
    text = "C uptime\nG 1.00\nP 42\nO 1.50 step\nX 2.00 0\n@samples\nT 1.01\n0|a\n1!\nT 1.02\n1|b\nL 3 1.01 1.02\n"
    run = parse_device_output(text)
    assert run.pid == 42 and run.lines == [(1_500_000_000, "step")] and run.status == 0
    assert run.records == [(1_010_000_000, {0: ["a"], 1: None}), (1_020_000_000, {1: ["b"]})]
    assert run.loop_cpu_ticks == 3


def test_tflite_benchmark_model_pattern_on_its_real_output():
    lines = (FIXTURES / "command" / "tflite_benchmark_model.out").read_text().splitlines()
    summary = NAMED_PATTERNS["tflite-benchmark-model"].read_summary(lines)
    assert summary is not None
    assert summary.mean_step_ms == pytest.approx(65.3612)
    assert summary.count == 50  # the measured run's count, not the warm-up's 8
    assert summary.extra["init_ms"] == pytest.approx(15.442)
    assert summary.extra["first_inference_ms"] == pytest.approx(72.917)


def test_mnn_train_demo_pattern_reads_latency_and_stamp_window():
    lines = (FIXTURES / "command" / "mnn_train_demo.out").read_text().splitlines()
    stamp = (FIXTURES / "command" / "train_stamp.result").read_text()
    summary = step_pattern("mnn-train-demo").read_summary(lines, stamp)
    assert summary is not None
    assert summary.mean_step_ms == 1843.25
    assert summary.extra == {"net": "MobileNetV2", "batch_size": 8}
    assert summary.window_ms == 1679312363555 - 1679312345123


def test_a_bad_step_pattern_is_one_usage_line():
    with pytest.raises(UsageError, match="--step-pattern: '\\(' is not a regular expression"):
        step_pattern("(")
