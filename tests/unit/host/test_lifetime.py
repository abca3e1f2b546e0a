"""Whether a process runs: a zombie does not (host/lifetime.py).  Signals sent to real trials are in
tests/e2e/cli/test_signals.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def test_a_zombie_is_not_running():
    """A trial's process killed after its parent died stays a zombie where init reaps no orphans (this VM's does
    not): its folder is stale all the same."""
    from edgebench.host.lifetime import process_running

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while Path(f"/proc/{child.pid}/stat").read_bytes().rpartition(b")")[2].split()[0] != b"Z":
        assert time.monotonic() < deadline, "the child never exited"
        time.sleep(0.02)
    assert not process_running(child.pid)  # exited, not yet reaped: a zombie
    child.wait()
    assert not process_running(child.pid)
    assert process_running(os.getpid())


def test_children_run_a_few_at_a_time_and_every_line_is_relayed(tmp_path):
    """Issue 39: a ``targets:`` list started one process per entry at once."""
    from edgebench.host.lifetime import run_children

    script = (
        "import fcntl, os, sys, time\n"
        "path = sys.argv[1]\n"
        "with open(path, 'a') as f: fcntl.flock(f, fcntl.LOCK_EX); f.write('+'); f.flush()\n"
        "time.sleep(0.2)\n"
        "live = open(path).read().count('+') - open(path).read().count('-')\n"
        "with open(path, 'a') as f: fcntl.flock(f, fcntl.LOCK_EX); f.write('-'); f.flush()\n"
        "print('peak', live); sys.exit(int(sys.argv[2]))\n"
    )
    log = tmp_path / "live.log"
    log.touch()
    commands = {f"t{i}": [sys.executable, "-c", script, str(log), str(i % 2)] for i in range(7)}
    lines = []
    codes = run_children(commands, lambda key, line: lines.append((key, line)), at_once=3)
    assert codes == {f"t{i}": i % 2 for i in range(7)}
    assert len(lines) == 7 and max(int(line.split()[1]) for _, line in lines) <= 3


def test_a_stop_while_a_worker_starts_is_taken_once_the_worker_can_be_stopped(monkeypatch):
    """Seen in a suite run under load: `run` got SIGTERM just after its worker had exec'd, while `Popen` still
    waited for the exec; the interrupt left the launcher no handle, and the worker (in a session of its own) trained
    on after the launcher exited 130.  The stop now comes after the start, and the worker is killed and reaped."""
    from edgebench.agents.python import agent
    from edgebench.records.trial import Trial

    started: list[subprocess.Popen[str]] = []

    def start_then_interrupted(trial: object, files: object) -> subprocess.Popen[str]:
        proc = subprocess.Popen(["sleep", "100"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        started.append(proc)
        os.kill(os.getpid(), signal.SIGINT)  # the Ctrl-C, before the handle is returned
        return proc

    monkeypatch.setattr(agent, "_start_worker", start_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        agent._supervise(Trial(), None, "/", sample=False)  # type: ignore[arg-type]
    assert started[0].poll() is not None  # killed and reaped, not left running


def test_interrupts_held_are_delivered_after_the_block_to_the_handlers_before_it():
    from edgebench.host.lifetime import Terminated, interrupts_held, termination_as_interrupt

    reached = []
    with pytest.raises(Terminated), termination_as_interrupt(), interrupts_held():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        reached.append("end of the block")
    assert reached == ["end of the block"]
