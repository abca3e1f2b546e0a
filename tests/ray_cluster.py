"""A real Ray cluster on this machine, its nodes started by ``edgebench fleet join`` (tests, benchmarks).

The head is reached at 127.0.0.1; Ray registers every node under the machine's own address (``ray start`` replaces
a loopback ``--node-ip-address`` with it), so none is given.  Each node is a separate ``ray start`` (raylet,
workers) with its own device resources; all of them share one session folder under ``root``, which is how their
processes are found again to kill one node or all of them (by their command line, or by the session's files they
hold open: the client server's command line names no folder): by pid, never by name, so no other Ray on the machine
is touched.  Usage statistics are off and there is no dashboard UI.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.paths import free_port

JOIN = [sys.executable, "-c", "import sys; from edgebench.cli import main; sys.exit(main())", "fleet", "join"]


class LocalCluster:
    def __init__(self, root: Path, *, object_store_bytes: int = 100_000_000) -> None:
        self.root = root
        # Ray's session folder holds its unix sockets, whose paths may not pass 107 bytes: a short folder of its own
        # in /tmp, not under pytest's (``/tmp/pytest-of-root/pytest-479/popen-gw0/fleet0/ray/session_...``).
        self.temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
        self.object_store_bytes = object_store_bytes
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            # a node that dies is noticed in about two seconds, not thirty
            "RAY_health_check_initial_delay_ms": "0",
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_timeout_ms": "500",
            "RAY_health_check_failure_threshold": "3",
        }
        self.nodes: list[str] = []
        # workers' ports below the ephemeral range the other ports are picked from, so the two never meet
        self._worker_port = random.randrange(20000, 29000, 1000)

    def join(self, name: str, *, targets: dict[str, str] | None = None, classes: dict[str, str] | None = None,
             num_cpus: int = 1, sysfs_root: Path | None = None) -> None:  # fmt: skip
        """Start a node named ``name`` (the head if it is the first) offering its CPU and ``targets``."""
        args = [*JOIN, "--name", name, "--num-cpus", str(num_cpus), "--object-store-memory",
                str(self.object_store_bytes), "--json"]  # fmt: skip
        for device, spec in (targets or {}).items():
            args += ["--targets", f"{device}={spec}"]
        for device, device_class in (classes or {}).items():
            args += ["--class", f"{device}={device_class}"]
        if sysfs_root is not None:
            args += ["--sysfs-root", str(sysfs_root)]
        if self.nodes:
            args += ["--address", self.address]
        else:
            args += ["--port", str(self.port), "--temp-dir", str(self.temp)]
        low = self._worker_port
        self._worker_port += 200
        args += ["--", f"--min-worker-port={low}", f"--max-worker-port={low + 150}",
                 f"--ray-client-server-port={free_port()}", "--disable-usage-stats"]  # fmt: skip
        if not self.nodes:
            args += [f"--node-manager-port={free_port()}", f"--object-manager-port={free_port()}"]
        done = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=180, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"fleet join {name} failed ({done.returncode}): {done.stderr[-2000:]}")
        self.nodes.append(name)
        self.join_stdout = done.stdout

    def pids(self, node: str | None = None) -> list[int]:
        """Processes of this cluster (of one node: its raylet and the workers and agents under it)."""
        mine = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if node is None and str(self.temp) not in cmdline and _writes_under(entry, self.temp):
                mine.append(int(entry.name))  # a Ray client server: its log is in the session, its command line not
            elif str(self.temp) in cmdline and (node is None or f"edgebench-host:{node}" in cmdline):
                mine.append(int(entry.name))
        if node is not None:  # the node's raylet, and what it started
            mine += [c for p in mine for c in _descendants(p)]
        return sorted(set(mine))

    def kill_node(self, node: str) -> None:
        for pid in self.pids(node):
            _kill(pid)

    def stop(self) -> None:
        """Kill every process of the cluster and remove its session folder; fails naming any that survive (the
        suite must leave no process behind)."""
        for _ in range(6):
            pids = self.pids() + [c for p in self.pids() for c in _descendants(p)]
            if not pids:
                break
            for pid in pids:
                _kill(pid)
            time.sleep(0.5)
        left = self.pids()
        shutil.rmtree(self.temp, ignore_errors=True)
        assert not left, f"Ray processes of the test cluster outlived it: {left}"


def _writes_under(proc: Path, folder: Path) -> bool:
    """Whether process ``proc`` (its ``/proc`` entry) has a file open under ``folder``: how the processes ``ray
    start`` leaves running are told apart from other Rays (each logs into its session folder), where the command
    line does not say (the client server's names only addresses and ports); they outlived the suite by minutes."""
    try:
        return any(os.readlink(fd).startswith(str(folder)) for fd in (proc / "fd").iterdir())
    except OSError:
        return False


def _descendants(pid: int) -> list[int]:
    out = []
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for child in map(int, children):
        out += [child, *_descendants(child)]
    return out


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
