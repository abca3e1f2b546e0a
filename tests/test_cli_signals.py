"""Real signals to real processes: a worker killed by someone other than the OOM killer, Ctrl-C on ``run``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from edgebench.store import Store


def launch(cli, *args: str) -> subprocess.Popen[str]:
    """``edgebench ARGS`` started as a user starts it, with the test's store, without waiting for it."""
    env = dict(os.environ, EDGEBENCH_STORE=str(cli.store_path), COLUMNS="120")
    return subprocess.Popen(
        [sys.executable, "-m", "edgebench", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def worker_of(launcher: subprocess.Popen[str], timeout_s: float = 60) -> int:
    """The pid of the worker the launcher started (its child running ``edgebench.runner.worker``)."""
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
            if parent == launcher.pid and b"edgebench.runner.worker" in cmdline:
                return int(entry.name)
        assert launcher.poll() is None, launcher.communicate()
        time.sleep(0.05)
    raise AssertionError("the launcher started no worker")


def test_a_worker_killed_by_a_user_is_killed_not_oom_and_no_step_is_claimed(cli):
    launcher = launch(cli, "run", "--steps", "100000", "--warmup", "0", "--infer-steps", "0")
    os.kill(worker_of(launcher), signal.SIGKILL)  # while it imports torch: no memory pressure, no step measured
    out, err = launcher.communicate(timeout=120)
    assert launcher.returncode == 1, err
    assert "killed" in out and "not by the out-of-memory killer" in out
    assert "none measured (100000 planned after 0 warm-up)" in out
    assert "over 100000 steps" not in out
    with Store(cli.store_path) as store:
        (stored,) = store.trials()
    assert stored.status == "killed" and stored.step_time_ms is None
    assert "counted no OOM kill" in stored.reason
    assert err.strip().splitlines()[-1] == f"edgebench: error: trial killed: {stored.reason}"
