"""Real signals to real processes: a worker killed by someone other than the OOM killer, Ctrl-C on ``run``."""

from __future__ import annotations

import collections
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from edgebench.store import Store
from tests.sweeping import start_sweep, stored_keys, wait_for


def worker_of(launcher: subprocess.Popen[str], timeout_s: float = 60) -> int:
    """The pid of the worker the launcher started (its child running ``edgebench.agents.python.worker``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes()
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == launcher.pid and b"edgebench.agents.python.worker" in cmdline:
                return int(entry.name)
        assert launcher.poll() is None, launcher.communicate()
        time.sleep(0.05)
    raise AssertionError("the launcher started no worker")


def test_a_worker_killed_by_a_user_is_killed_not_oom_and_no_step_is_claimed(cli):
    launcher = cli.start("run", "--backend", "fake", "--steps", "100000", "--warmup", "0", "--infer-steps", "0")
    os.kill(worker_of(launcher), signal.SIGKILL)  # while it imports torch: no memory pressure, no step measured
    out, err = launcher.communicate(timeout=120)
    assert launcher.returncode == 1, err
    assert "killed" in out and "not by the out-of-memory killer" in out
    assert "none measured (100000 planned after 0 warm-up)" in out
    assert "over 100000 steps" not in out
    with Store(cli.store_path) as store:
        (stored,) = store.trials()
    assert stored.status == "killed" and stored.latency.step_ms is None
    assert "counted no OOM kill" in stored.reason
    assert err.strip().splitlines()[-1] == f"edgebench: error: trial killed: {stored.reason}"


def test_ctrl_c_on_run_prints_its_line_and_exits_130(cli):
    launcher = cli.start("run", "--backend", "fake", "--steps", "100000", "--warmup", "0", "--infer-steps", "0")
    worker_of(launcher)
    time.sleep(1.0)
    launcher.send_signal(signal.SIGINT)
    out, err = launcher.communicate(timeout=60)
    assert launcher.returncode == 130
    assert err.strip().splitlines()[-1] == "edgebench: error: interrupted; nothing was stored"
    assert out == ""
    with Store(cli.store_path) as store:
        assert store.trials() == []


def test_the_resume_hint_after_ctrl_c_is_the_command_that_resumes_this_sweep(cli, tmp_path):
    overrides = ["--set", "models=[lenet]", "--set", "batch_sizes=[1, 2, 3]", "--set", "steps=2",
                 "--set", "infer_steps=0", "--set", "backend=fake"]  # fmt: skip
    sweep = start_sweep(cli, *overrides)
    wait_for(cli.store_path, 1, sweep)
    sweep.send_signal(signal.SIGINT)
    _, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 130, err
    hint = re.search(r"`(edgebench sweep .*)` runs them", err.strip().splitlines()[-1])
    assert hint, err
    words = shlex.split(hint.group(1))
    assert words[:2] == ["edgebench", "sweep"] and words[-1] == "--resume"
    assert words[2:-1] == overrides
    proc = cli(*words[1:])
    assert proc.returncode == 0, proc.stderr
    assert "already stored" in proc.stdout
    assert sorted(collections.Counter(stored_keys(cli.store_path)).values()) == [1, 1, 1]  # each once, none lost


def work_dirs(launcher: subprocess.Popen[str]) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"edgebench-{launcher.pid}-*"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_terminating_signal_on_run_stops_its_worker_and_removes_its_trial_folder(cli, signum):
    launcher = cli.start("run", "--backend", "fake", "--steps", "100000", "--warmup", "0", "--infer-steps", "0")
    worker = worker_of(launcher)
    assert len(work_dirs(launcher)) == 1
    launcher.send_signal(signum)
    _, err = launcher.communicate(timeout=60)
    assert launcher.returncode == 130
    assert err.strip().splitlines()[-1] == "edgebench: error: interrupted; nothing was stored"
    assert work_dirs(launcher) == []
    assert not Path(f"/proc/{worker}").exists() or "Z" in Path(f"/proc/{worker}/stat").read_text().split(")")[1][:3]


def test_the_folder_of_a_killed_launcher_is_removed_by_the_next_trial(cli):
    launcher = cli.start("run", "--backend", "fake", "--steps", "100000", "--warmup", "0", "--infer-steps", "0")
    worker = worker_of(launcher)
    (left,) = work_dirs(launcher)
    launcher.kill()  # no cleanup runs at all; the worker dies with it
    launcher.communicate(timeout=60)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{worker}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left.is_dir()
    proc = cli("run", "--backend", "fake", "--steps", "1", "--warmup", "0", "--infer-steps", "0", "--no-store")
    assert proc.returncode == 0, proc.stderr
    assert not left.exists()


def test_a_killed_command_trials_folder_is_removed_by_the_next_command_trial(cli, tmp_path):
    # what a fleet host's node leaves when it dies mid-trial: a command trial's folder, with subfolders, of a dead pid
    from edgebench.host.workdirs import COMMAND_MARKER, remove_stale_work_dirs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = Path(tempfile.gettempdir()) / f"edgebench-{dead.pid}-command-x1"
    (left / "pushed").mkdir(parents=True)
    (left / COMMAND_MARKER).touch()
    (left / "pushed" / "data.bin").write_bytes(b"1")
    not_ours = tmp_path / f"edgebench-{dead.pid}-photos"  # named alike, with a subfolder and no marker: kept
    (not_ours / "2026").mkdir(parents=True)
    assert remove_stale_work_dirs(tmp_path) == []
    proc = cli(
        "run", "--command", "echo step", "--step-pattern", "^step$", "--steps", "1", "--warmup", "0", "--no-store"
    )
    assert proc.returncode == 0, proc.stderr
    assert not left.exists() and not_ours.is_dir()
