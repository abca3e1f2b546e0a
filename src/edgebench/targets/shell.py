"""A POSIX ``sh`` on a device: the one interface the ``--command`` path and the device-side sampler need.

A local ``/bin/sh``, ``ssh host sh -c`` and ``adb -s SERIAL shell`` all offer the same few things: run a script to
its end, start one that streams, copy a file each way, and a scratch directory.  Everything that runs a workload or
samples sensors on a device is written against :class:`Shell`, so a transport is only these five methods.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Protocol


class Shell(Protocol):
    """A POSIX sh on the device (local sh, ssh, adb shell)."""

    #: How a user names the device (``local``, ``ssh://orin``, ``adb://SERIAL``).
    name: str

    def run(
        self, script: str, *, timeout_s: float | None = None, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """``sh -c script`` on the device to its end; a non-zero exit is returned, never raised.

        ``timeout_s`` raises :class:`subprocess.TimeoutExpired` after killing the local end.
        """
        ...

    def start(self, script: str) -> subprocess.Popen[bytes]:
        """``sh -c script`` on the device, streaming: stdout and stderr are pipes, stdin is a pipe.

        Killing the returned process (or closing its stdin) must leave no device process behind; the script is
        responsible for its own children (it traps and kills its process group), the transport for delivering
        the hang-up (ssh: no ``-T`` keep-alive after EOF; adb: the shell exits with its pty).
        """
        ...

    def push(self, local: Path, remote: str) -> None:
        """Copy a local file or directory to ``remote`` on the device (parents created); raises on failure."""
        ...

    def pull(self, remote: str, local: Path) -> None:
        """Copy ``remote`` from the device to ``local``; raises on failure."""
        ...

    def workdir(self) -> str:
        """A per-target scratch directory on the device, created on first use (absolute path)."""
        ...


class LocalShell:
    """``/bin/sh`` on this machine: what ``--command`` runs through on the ``local`` target.

    ``sh`` names the shell binary (``mksh``, ``dash``, ``busybox sh``...), so tests and benchmarks can run the
    device-side scripts under the shells devices have.  By default it is the first of ``mksh`` and ``busybox sh``
    found (their ``EPOCHREALTIME`` stamps output lines to the microsecond), else ``/bin/sh`` (dash on Debian:
    ``/proc/uptime``, 10 ms).
    """

    name = "local"

    def __init__(self, sh: tuple[str, ...] | str | None = None, workdir: str | os.PathLike[str] | None = None) -> None:
        if sh is None:
            sh = next(((s,) if s == "mksh" else (s, "sh") for s in ("mksh", "busybox") if shutil.which(s)), "/bin/sh")
        self.sh = (sh,) if isinstance(sh, str) else tuple(sh)
        self._workdir = str(workdir) if workdir is not None else None

    def run(
        self, script: str, *, timeout_s: float | None = None, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*self.sh, "-c", script], input=stdin, capture_output=True, timeout=timeout_s, check=False
        )

    def start(self, script: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*self.sh, "-c", script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: the caller may kill the whole group
        )

    def push(self, local: Path, remote: str) -> None:
        """A file to ``remote``; a folder replaces ``remote`` (no stale files left to run), which must then lie
        inside this shell's work folder: nothing edgebench removes lies outside what it created (a symbolic link
        an earlier push left there included, hence the resolved paths)."""
        if Path(local).is_dir():
            target, work = Path(remote).resolve(), Path(self.workdir()).resolve()
            if not target.is_relative_to(work) or target == work:
                raise OSError(f"refusing to replace {remote}: it is outside the work folder {work}")
            shutil.rmtree(target, ignore_errors=True)
        self._copy(Path(local), Path(remote))

    def pull(self, remote: str, local: Path) -> None:
        self._copy(Path(remote), Path(local))

    @staticmethod
    def _copy(source: Path, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)

    def workdir(self) -> str:
        if self._workdir is None:
            self._workdir = tempfile.mkdtemp(prefix="edgebench-device-")
        Path(self._workdir).mkdir(parents=True, exist_ok=True)
        return self._workdir


class ClientShell:
    """A device's shell through a client program (``ssh``, ``adb``): each script is one client command line.

    A transport says only how a script becomes that command line (:meth:`command_line`) and how files travel; the
    user's environment for the device (a target's ``env:``) is exported ahead of every script.
    """

    name: str

    def __init__(self, *, workdir: str, env: dict[str, str] | None = None) -> None:
        self._workdir = workdir
        self._made = False
        self.env = env or {}

    def command_line(self, script: str) -> list[str]:
        """The local command that runs ``script`` (already prefixed by :meth:`with_env`) on the device."""
        raise NotImplementedError

    def with_env(self, script: str) -> str:
        return "".join(f"export {k}={shlex.quote(v)}; " for k, v in self.env.items()) + script

    def run(
        self, script: str, *, timeout_s: float | None = None, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``script`` to its end; ``stdin`` is sent and closed.  ``TimeoutExpired`` kills the local client,
        which the device sees as its stdin ending."""
        return subprocess.run(
            self.command_line(self.with_env(script)),
            input=stdin if stdin is not None else b"",
            capture_output=True,
            timeout=timeout_s,
        )

    def start(self, script: str) -> subprocess.Popen[bytes]:
        """Start ``script`` with its stdin, stdout and stderr as pipes: closing stdin is how the device learns
        that the workstation is done (see :mod:`edgebench.targets.guard`)."""
        return subprocess.Popen(
            self.command_line(self.with_env(script)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def stdin_can_end(self) -> bool:
        """Whether the device's shell sees its stdin end when the client closes it (so a session is waited for, not
        hung up): yes, unless a transport says otherwise (an adb phone without the shell protocol)."""
        return True

    def close(self) -> None:
        """End what the client keeps open between scripts (an SSH master connection); nothing by default."""

    def workdir(self) -> str:
        """The target's folder on the device (its ``workdir:``), created on first use."""
        if not self._made:
            self.run(f"mkdir -p {shlex.quote(self._workdir)}", timeout_s=60)
            self._made = True
        return self._workdir
