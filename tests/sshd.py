"""A real OpenSSH server on 127.0.0.1 for the remote-target tests: a throwaway host key and client key, a free
high port, the current user, and an ``ssh_config`` of its own so that the user's ``~/.ssh/config`` is untouched.

The far side runs this same install: the target's ``python`` is this interpreter and its ``env`` puts this
checkout's sources first, as ``python:``/``env:`` of a target in the configuration file would on a real board.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import free_port

INSTALL = "apt-get install -y openssh-server mksh busybox adb"
SRC = Path(__file__).resolve().parents[1] / "src"
ALIAS = "edgebench-test-board"


@dataclass
class Sshd:
    process: subprocess.Popen[bytes]
    port: int
    ssh_config: Path
    folder: Path

    def connection_pids(self) -> list[int]:
        """The per-connection sshd processes (children of the listener): killing one drops that connection."""
        out = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True).stdout
        return [int(p) for p in out.split()]

    def drop_connections(self) -> int:
        pids = self.connection_pids()
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return len(pids)

    def target_config(self, workdir: Path, **extra: object) -> dict[str, object]:
        """Settings of a configured target reaching this server through its Host alias."""
        return {
            "url": f"ssh://{ALIAS}",
            "ssh_config": str(self.ssh_config),
            "python": sys.executable,
            "env": {"PYTHONPATH": str(SRC)},
            "workdir": str(workdir),
            **extra,
        }


def start_sshd(folder: Path) -> Sshd:
    sshd = shutil.which("sshd") or "/usr/sbin/sshd"
    if not os.path.exists(sshd) or shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        pytest.fail(f"OpenSSH server and client are needed: {INSTALL}")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(folder / name)], check=True)
    shutil.copy(folder / "client_key.pub", folder / "authorized_keys")
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(exist_ok=True)  # privilege separation folder sshd insists on when run as root
    port = free_port()
    config = folder / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\nPidFile {folder / 'sshd.pid'}\n"
        "StrictModes no\nUsePAM no\nPermitRootLogin yes\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nMaxSessions 64\nMaxStartups 64\n"
        "LogLevel ERROR\n"
    )
    process = subprocess.Popen([sshd, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE)
    client = folder / "ssh_config"
    client.write_text(
        f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {folder / 'client_key'}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n"
        "  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"sshd exited at start: {err.strip()} ({INSTALL})")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return Sshd(process, port, client, folder)
        time.sleep(0.05)
    process.kill()
    pytest.fail("sshd did not listen within 20 s")


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sshd]:
    server = start_sshd(tmp_path_factory.mktemp("sshd"))
    yield server
    # The connections first: a master connection left by a command the tests killed (SIGKILL: it could not close
    # it) ends when its connection does, not a ControlPersist later; terminating the listener alone leaves every
    # connection's own sshd, and so every master, running past the suite.
    server.drop_connections()
    server.process.terminate()
    try:
        server.process.wait(10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    forget_masters()


def forget_masters(timeout_s: float = 10.0) -> None:
    """Wait for the master connections of killed commands to end (their connections were dropped), then remove
    the folders they leave in this suite's temporary folder."""
    from edgebench.host.workdirs import remove_stale_work_dirs

    deadline = time.monotonic() + timeout_s
    folder = Path(tempfile.gettempdir())
    while time.monotonic() < deadline:
        remove_stale_work_dirs(folder)
        if not list(folder.glob("edgebench-*-ssh-*")):
            return
        time.sleep(0.1)


@pytest.fixture
def board(sshd: Sshd, tmp_path: Path):
    """Open the loopback board as a configured target named ``board``; closed after the test."""
    from edgebench.targets import open_target
    from edgebench.targets.named import TargetConfig

    opened = []

    def open_board(**extra):
        config = TargetConfig(name="board", **sshd.target_config(tmp_path / "work", **extra))
        opened.append(open_target("board", named={"board": config}))
        return opened[-1]

    yield open_board
    for target in opened:
        target.close()
