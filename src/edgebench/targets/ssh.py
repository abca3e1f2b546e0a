"""``ssh://[user@]host[:port]``: a board reached with the user's own OpenSSH client.

The real ``ssh`` is called with the host as the user wrote it, so ``~/.ssh/config`` (Host aliases, IdentityFile,
ProxyJump), keys and the agent all apply.  ``BatchMode=yes`` makes a missing key fail at once instead of asking for a
password in the middle of a sweep; one master connection per target (``ControlMaster``/``ControlPersist``) makes
each later command one round trip instead of a handshake.  The master's socket lives in a folder of this process's
own (``edgebench-<pid>-ssh-*`` in the temporary folder), and closing the target, or the process ending, ends the
master and removes the folder: none outlives the command (a test suite's did, by minutes, in ``/tmp``).  Files
travel through ``ssh ... cat`` so that a board without an SFTP server (dropbear, busybox) works the same.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path
from urllib.parse import urlsplit

from edgebench.errors import UsageError
from edgebench.targets.named import TargetConfig
from edgebench.targets.remote import RemoteTarget
from edgebench.targets.shell import ClientShell

#: Exit status of ``ssh`` itself failing (connection, authentication), as opposed to the remote command's.
SSH_FAILED = 255

#: A host name, an alias of ``~/.ssh/config`` or an address (IPv6 without its brackets): never starting with ``-``,
#: which ``ssh`` would read as an option (``ssh://-oProxyCommand=...`` ran a command here).
_HOST = re.compile(r"^[A-Za-z0-9_%][A-Za-z0-9._%:-]*$")
#: A login name: what ``useradd`` accepts, and never an option either.
_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*\$?$")


def check_host(host: str, field: str = "--target") -> str:
    """``host`` if it is a host name, alias or address; else one line naming ``field``.  The one host validator
    (ssh's host is also passed after ``--``, so that no host can be read as an option)."""
    if not _HOST.match(host) or len(host) > 253:
        raise UsageError(field, f"{host!r} is not a host name (letters, digits, and .-_:% after the first)")
    return host


def parse_ssh_url(url: str) -> tuple[str | None, str, int | None]:
    """``ssh://user@host:port`` -> (user, host, port); the host may be a ``~/.ssh/config`` alias."""
    parts = urlsplit(url)
    if parts.scheme != "ssh" or not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise UsageError("--target", f"{url!r} is not ssh://[user@]host[:port] (a Host alias of ~/.ssh/config works)")
    try:
        port = parts.port
    except ValueError:
        raise UsageError("--target", f"{url!r}: the port is not a number") from None
    host = check_host(parts.hostname)
    if parts.username is not None and not _USER.match(parts.username):
        raise UsageError("--target", f"{url!r}: {parts.username!r} is not a user name")
    return parts.username, host, port


#: Seconds to wait for the device's SSH server to answer at all (``ssh_options: [ConnectTimeout=N]`` overrides).
CONNECT_TIMEOUT_S = 10
#: How long an idle master connection stays up: across a trial's cool-down its commands reuse it; it ends with the
#: target anyway, so this bounds only a process killed before it could close it.
CONTROL_PERSIST_S = 30


def control_folder() -> Path:
    """A new folder for one master connection's socket: in the temporary folder where its path is short enough for
    a unix socket (about 100 bytes, ssh's own suffix included), else in ``/tmp``; named after this process, so that
    one a killed process left is removed by :func:`edgebench.host.workdirs.remove_stale_work_dirs`."""
    base = Path(tempfile.gettempdir())
    return Path(tempfile.mkdtemp(prefix=f"edgebench-{os.getpid()}-ssh-", dir=base if len(str(base)) <= 60 else "/tmp"))


def _end_master(options: list[str], host: str, folder: Path) -> None:
    """``ssh -O exit`` the master whose socket is in ``folder`` (if it runs), then remove the folder."""
    if (folder / "m").exists():
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([*options, "-O", "exit", "--", host], capture_output=True, timeout=10)
    shutil.rmtree(folder, ignore_errors=True)


class SshShell(ClientShell):
    """The device's POSIX shell through ``ssh``; every script runs under ``sh -c`` whatever the login shell is."""

    def __init__(
        self,
        url: str,
        *,
        workdir: str,
        ssh_config: str | None = None,
        options: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        super().__init__(workdir=workdir, env=env)
        self.url = url
        self.name = url
        self.user, self.host, self.port = parse_ssh_url(url)
        self.ssh_config = ssh_config
        self.options = options
        self._control: Path | None = None
        self._ending: weakref.finalize | None = None

    @property
    def control_path(self) -> str:
        """The master connection's socket, in a folder made on first use and removed with the master."""
        if self._control is None:
            self._control = control_folder()
            options = self._options(self._control / "m")
            self._ending = weakref.finalize(self, _end_master, options, self.host, self._control)
        return str(self._control / "m")

    def ssh_args(self) -> list[str]:
        """``ssh``, its options, ``--`` and the host: what every command line starts with."""
        return [*self.ssh_options(), "--", self.host]

    def ssh_options(self) -> list[str]:
        return self._options(Path(self.control_path))

    def _options(self, control_path: Path) -> list[str]:
        args = ["ssh"]
        if self.ssh_config:
            args += ["-F", self.ssh_config]
        for option in self.options:  # first: ssh keeps the first value given for an option, so the user's win
            args += ["-o", option]
        args += [
            # An address that drops packets (a board switched off, a phone's Wi-Fi asleep) otherwise holds the
            # connect for the kernel's two minutes of SYN retries, for every command of the trial.
            "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            "-o", "BatchMode=yes",
            "-o", "ControlMaster=auto",
            "-o", f"ControlPath={control_path}",
            "-o", f"ControlPersist={CONTROL_PERSIST_S}",
            "-o", "ServerAliveInterval=5",
            "-o", "ServerAliveCountMax=3",
        ]  # fmt: skip
        if self.port is not None:
            args += ["-p", str(self.port)]
        if self.user:
            args += ["-l", self.user]
        return args

    def command_line(self, script: str) -> list[str]:
        return [*self.ssh_args(), "exec sh -c " + shlex.quote(script)]

    def push(self, local: Path, remote: str) -> None:
        """Copy a file (its mode's executable bit kept) or a folder's files to ``remote`` on the device."""
        source = Path(local)
        if source.is_dir():  # a folder replaces remote: files deleted here must not stay there to be run
            cleared = subprocess.run(
                self.command_line(self.with_env(f"rm -rf {shlex.quote(remote)}")), capture_output=True, input=b""
            )
            if cleared.returncode != 0:
                raise OSError(f"cannot replace {self.url}:{remote}: {cleared.stderr.decode().strip()}")
        files = [source] if source.is_file() else sorted(p for p in source.rglob("*") if p.is_file())
        for path in files:
            dest = remote if source.is_file() else f"{remote}/{path.relative_to(source).as_posix()}"
            mode = "chmod +x " + shlex.quote(dest) + "; " if os.access(path, os.X_OK) else ""
            quoted = shlex.quote(dest)
            script = f'mkdir -p "$(dirname {quoted})" && cat > {quoted} && {mode}true'
            with open(path, "rb") as f:
                done = subprocess.run(self.command_line(self.with_env(script)), stdin=f, capture_output=True)
            if done.returncode != 0:
                raise OSError(f"cannot copy {path} to {self.url}:{dest}: {done.stderr.decode().strip()}")

    def pull(self, remote: str, local: Path) -> None:
        """Copy one file from the device."""
        done = subprocess.run(self.command_line(self.with_env(f"cat {shlex.quote(remote)}")), capture_output=True)
        if done.returncode != 0:
            raise OSError(f"cannot copy {self.url}:{remote}: {done.stderr.decode().strip()}")
        Path(local).write_bytes(done.stdout)

    def close(self) -> None:
        """End the master connection (``ssh -O exit``) and remove its folder; later commands open a new one."""
        if self._ending is not None:
            self._ending()  # runs once: not again when the shell is collected or the process ends
        self._control = self._ending = None


def connection_error(url: str, stderr: str) -> str:
    """One line saying why ``ssh`` could not get in, from its own last words."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("Warning")]
    last = lines[-1] if lines else "ssh failed without saying why"
    if "Permission denied" in last:
        return f"{url} refused the key ({last}); add your key to the device or name it in ~/.ssh/config"
    if "Host key verification failed" in last:
        return f"{url}: host key verification failed; connect once with ssh to accept the device's key"
    return f"cannot reach {url}: {last}"


class SshTarget(RemoteTarget):
    scheme = "ssh"
    default_workdir = "/tmp/edgebench"

    def make_shell(self, config: TargetConfig) -> SshShell:
        return SshShell(
            config.url,
            workdir=config.workdir or self.default_workdir,
            ssh_config=config.ssh_config,
            options=tuple(config.ssh_options),
            env=config.env,
        )

    def connection_failure(self, returncode: int, stderr: str) -> str | None:
        return connection_error(self.name, stderr) if returncode == SSH_FAILED else None
