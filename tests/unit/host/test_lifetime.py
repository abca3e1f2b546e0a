"""Whether a process runs: a zombie does not (host/lifetime.py).  Signals sent to real trials are in
tests/e2e/cli/test_signals.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


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
