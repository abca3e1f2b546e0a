"""What every remote target does the same way over its shell (SSH or adb): connect, probe root, read the device's
files, run a trial through the device's own edgebench agent, and survive a dropped connection.

A transport only says how to make its shell and how to read its client's failure; the rest is here.  Everything
runs in POSIX ``sh`` on the device (``mksh`` with toybox on Android, busybox ``ash`` on boards), so no Python is
needed there except for trials of edgebench's own models.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from edgebench.errors import UsageError
from edgebench.host.cpuset import parse_cpu_list
from edgebench.host.environment import host_environment
from edgebench.records.bundle import BUNDLE_VERSION, Failure, TrialBundle, schema_fingerprint
from edgebench.records.device import sensor_source_of
from edgebench.records.events import read_events, steps_of
from edgebench.records.trial import Trial
from edgebench.targets.base import TargetCapabilities
from edgebench.targets.guard import ENDED_LINE, guarded
from edgebench.targets.named import TargetConfig
from edgebench.targets.remote_sysfs import RemoteSysFS, sh_text
from edgebench.targets.shell import ClientShell, Shell

#: Commands every remote target needs on the device (the rest of the device-side scripts are ``sh`` builtins).
NEEDED_COMMANDS = ("cat", "mkdir", "rm", "mv")
#: Margin on a trial's timeout for starting Python and the framework on the device.
_STARTUP_MARGIN_S = 360.0
#: How long a device that dropped mid-trial is waited for to fetch what it measured and tidy up (an adb server
#: reconnects a TCP device 5-11 s after a drop; SSH reconnects at once).
_RECONNECT_S = 40.0
#: The last line of the fetch after a drop: without it the fetch itself was cut (the real adb client exits 0).
_FETCHED = "edgebench-fetched"
#: Su forms tried, in order, when a target names none (the MNN-based suite's order).
DEFAULT_SU_FORMS = ("su -0", "su -c")

_PROBE_EDGEBENCH = (
    "import json, edgebench, edgebench.records.bundle as b; "
    "print(json.dumps({'version': edgebench.__version__, 'bundle': b.BUNDLE_VERSION, "
    "'schema': b.schema_fingerprint() if hasattr(b, 'schema_fingerprint') else None}))"
)


class RemoteTarget:
    """A device behind a shell; subclasses give :meth:`make_shell` and :meth:`connection_failure`."""

    scheme: ClassVar[str]
    default_workdir: ClassVar[str]
    #: The device's files come through a mirror (:class:`~edgebench.targets.remote_sysfs.RemoteSysFS`).
    capabilities: ClassVar[TargetCapabilities] = TargetCapabilities(mirrored_sysfs=True)

    def __init__(self, config: TargetConfig) -> None:
        self.config = config
        self.name = config.label
        self.shell = self.make_shell(config)
        self._uid: int | None = None
        self._root_wrapper: str | None = None  # "" = already root, "su -c" = the form that works
        self._sysfs: RemoteSysFS | None = None
        self._edgebench: dict[str, Any] | None = None

    # -- opening ---------------------------------------------------------------------------------------------

    @classmethod
    def open(cls, spec: str, *, sysfs_root: str = "/") -> RemoteTarget:
        return cls.from_config(TargetConfig(url=spec))

    @classmethod
    def from_config(cls, config: TargetConfig) -> RemoteTarget:
        target = cls(config)
        target.connect()
        return target

    def make_shell(self, config: TargetConfig) -> ClientShell:
        raise NotImplementedError

    def connection_failure(self, returncode: int, stderr: str) -> str | None:
        """The one line saying why the client could not reach the device, or None when the command itself failed."""
        raise NotImplementedError

    def dropped(self, returncode: int | None) -> str:
        """Why a session ended without its end line although the client said nothing: the transport may look the
        device up again (adb: ``get-state``).  Debian's adb client exits 0 with an empty stderr on a drop."""
        if returncode is not None and returncode < 0:
            return f"{self.name}: the client was stopped (signal {-returncode}) before the device's session ended"
        return f"{self.name}: the session ended before the device said so (client exit status {returncode})"

    @property
    def workdir(self) -> str:
        return str(self.shell.workdir())

    def connect(self) -> None:
        """Reach the device once: a refused key, an unreachable host or a missing command is a usage error."""
        probe = (
            "id -u; for c in "
            + " ".join(NEEDED_COMMANDS)
            + '; do command -v "$c" >/dev/null || echo "missing $c"; done'
        )
        done = sh_text(self.shell, probe, 60, None)
        failure = self.connection_failure(done.returncode, done.stderr or "")
        if failure is not None:
            raise UsageError("--target", failure)
        lines = done.stdout.split()
        missing = [lines[i + 1] for i, word in enumerate(lines[:-1]) if word == "missing"]
        if missing:
            raise UsageError("--target", f"{self.name} lacks {', '.join(missing)} (needed on the device)")
        try:
            self._uid = int(lines[0])
        except (IndexError, ValueError):
            raise UsageError("--target", f"{self.name}: `id -u` printed {done.stdout.strip()!r}") from None
        if self.config.root:
            self._probe_root()

    # -- root ------------------------------------------------------------------------------------------------

    def try_transport_root(self) -> bool:
        """A transport's own way to root (``adb root``); SSH has none."""
        return False

    def _probe_root(self) -> None:
        """Once per target: already uid 0, the transport's way, then each su form; refuse ``--root`` without any."""
        if self._uid == 0 or self.try_transport_root():
            self._root_wrapper = ""
            return
        forms = (self.config.su,) if self.config.su else DEFAULT_SU_FORMS
        for form in forms:
            done = sh_text(self.shell, f"{form} {shlex.quote('id -u')}", 30, None)
            if done.returncode == 0 and done.stdout.strip().splitlines()[-1:] == ["0"]:
                self._root_wrapper = form
                return
        raise UsageError(
            "--root",
            f"{self.name} gives no root: uid {self._uid}, and {' nor '.join(repr(f) for f in forms)} did not run as "
            "root; root the device, set the target's su form, or leave --root out",
        )

    def as_root(self, script: str) -> str:
        """``script`` run as root when the target uses root, else as it is."""
        if not self._root_wrapper:
            return script
        return f"{self._root_wrapper} {shlex.quote(script)}"

    def is_root(self) -> bool:
        return self._uid == 0 or self._root_wrapper is not None

    # -- the device's files and facts ------------------------------------------------------------------------

    def sysfs(self) -> RemoteSysFS:
        if self._sysfs is None:
            reason = "permission denied" if self.is_root() else "permission denied: unrooted"
            self._sysfs = RemoteSysFS(
                self.shell, device_root=self.config.sysfs_root, as_root=self.as_root, denied_reason=reason
            )
        return self._sysfs

    def allowed_cores(self) -> tuple[int, ...]:
        done = sh_text(self.shell, self.as_root("cat /proc/self/status"), 30, None)
        for line in done.stdout.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                return parse_cpu_list(line.split(":", 1)[1])
        online = self.sysfs().read_str("/sys/devices/system/cpu/online")
        return parse_cpu_list(online or "0")

    def environment(self) -> dict[str, Any]:
        """The device's CPU, cores, governors and memory from its files; host name and OS from ``uname``."""
        env = host_environment(self.sysfs())
        done = sh_text(self.shell, "uname -n; uname -m; uname -r; uname -s", 30, None)
        names = done.stdout.split("\n")
        if done.returncode == 0 and len(names) >= 4:
            env.update(hostname=names[0], machine=names[1], kernel=names[2], os=f"{names[3]}-{names[2]}")
        root = self.config.sysfs_root
        env.update(python=None, sysfs_root=root, sensor_source=sensor_source_of(root), **self._marks())
        return env

    def _marks(self) -> dict[str, str]:
        """What every result from this target records of it: its name and, for exports, the device's name."""
        marks = {"target": self.name}
        if self.config.device_name:
            marks["device_name"] = self.config.device_name
        return marks

    def missing_device(self, backend: str, device: str) -> str | None:
        if device == "cpu":
            return None
        code = (
            "from edgebench.registry import BACKENDS; "
            f"print(BACKENDS.load({backend!r}).missing_device({device!r}) or '')"
        )
        done = sh_text(self.shell, self._python(f"-c {shlex.quote(code)}"), 120, None)
        if done.returncode != 0:
            return f"cannot ask {self.name}'s edgebench: {(done.stderr or '').strip().splitlines()[-1:]}"
        return done.stdout.strip() or None

    def _python(self, args: str) -> str:
        return f"{self.config.python} {args}"  # the target's env is exported by its shell

    def edgebench_info(self) -> dict[str, Any]:
        """The device's edgebench (version, bundle version, schema); refuse one that speaks another schema."""
        if self._edgebench is not None:
            return self._edgebench
        from edgebench import __version__

        done = sh_text(self.shell, self._python(f"-c {shlex.quote(_PROBE_EDGEBENCH)}"), 120, None)
        failure = self.connection_failure(done.returncode, done.stderr or "")
        if failure is not None:
            raise UsageError("--target", failure)
        if done.returncode != 0:
            why = ((done.stderr or "").strip().splitlines() or ["no output"])[-1]
            raise UsageError(
                "--target",
                f"{self.name} has no edgebench for {self.config.python} ({why}); install edgebench {__version__} "
                "there (or set the target's python:), or run your own binary with --command",
            )
        info = json.loads(done.stdout.strip().splitlines()[-1])
        if info.get("bundle") != BUNDLE_VERSION or info.get("schema") != schema_fingerprint():
            raise UsageError(
                "--target",
                f"{self.name} has edgebench {info.get('version')} (trial bundle version {info.get('bundle')}, schema "
                f"{info.get('schema')}), this is edgebench {__version__} (version {BUNDLE_VERSION}, schema "
                f"{schema_fingerprint()}): install the same version on both",
            )
        self._edgebench = info
        return info

    # -- running a trial -------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def command_shell(self) -> Iterator[tuple[Shell, str]]:
        """The device's shell (as root where the target uses root) and the root of the device's files as the
        device-side script sees them; the script keeps its files in the target's work folder."""
        root = "" if self.config.sysfs_root.rstrip("/") == "" else self.config.sysfs_root.rstrip("/")
        yield RootedShell(self.shell, self.as_root), root

    def run_python_agent(self, module: str, trial: Trial, *, sample: bool = True) -> TrialBundle:
        """Run the launcher's Python agent (``python -m module``) with the device's edgebench: the trial goes on
        its stdin, the bundle comes back on its stdout.  A lost connection is a ``crashed`` bundle."""
        self.edgebench_info()
        session = f"{self.workdir}/session-{os.urandom(6).hex()}"
        sent, marks = trial, self._marks()
        try:  # the files travel; the trial keeps the workstation's paths and digests
            if trial.model_file is not None:
                on_device = self.push_model_file(trial)
                sent, marks = (
                    sent.model_copy(update={"model_file": on_device}),
                    {**marks, "model_file_on_device": on_device},
                )
            if trial.data is not None and trial.data_sha256 is not None:  # a text file a language model trains on
                on_device = self.push_file(Path(trial.data), trial.data_sha256, "data")
                sent = sent.model_copy(update={"data": on_device})
                marks = {**marks, "data_on_device": on_device}
        except OSError as exc:
            return TrialBundle(trial=trial, events=[], env=marks, failure=Failure(status="crashed", reason=str(exc)))
        tmp = f"{session}/tmp"
        agent_args = f"-m {module} - {shlex.quote(self.config.sysfs_root)}" + ("" if sample else " --no-sample")
        body = f"mkdir -p {shlex.quote(tmp)} && TMPDIR={shlex.quote(tmp)} exec {self._python(agent_args)}"
        proc = self.shell.start(self.as_root(guarded(body, f"{session}/guard", payload=True)))
        limit_s = trial.timeout_s + _STARTUP_MARGIN_S + (trial.idle_s or 0.0)
        stdout, stderr, status = _exchange(proc, sent.model_dump_json() + "\n", limit_s, self.shell.stdin_can_end())
        last = stdout.strip().splitlines()[-1:] if stdout.strip() else []
        if status == 0 and last and last[0].startswith("{"):
            self._remove(session)
            bundle = TrialBundle.model_validate_json(last[0])
            return bundle.model_copy(update={"trial": trial, "env": {**bundle.env, **marks}})
        reason = self.connection_failure(proc.returncode or 0, stderr)
        if reason is None and status is None:
            reason = self.dropped(proc.returncode)
        if reason is None:  # an old phone's shell merges stderr into stdout: its last line is the agent's error
            tail = (stderr.strip().splitlines() or stdout.strip().splitlines() or [f"exit status {status}"])[-1]
            reason = f"the agent on {self.name} ended without a result: {tail}"
        else:
            reason = f"connection lost mid-trial: {reason}"
        return self._lost(trial, session, reason)

    def push_model_file(self, trial: Trial) -> str:
        """Copy the trial's model file into the target's work folder (``models/<sha256>/<name>``) unless a copy
        with the same digest is already there (a sweep pushes it once), and return its path on the device.

        Keyed by the digest the trial recorded, so a file changed here since is a new copy, never a stale one; the
        local file is checked against that digest first (``OSError`` if it changed or is gone)."""
        assert trial.model_file is not None
        return self.push_file(Path(trial.model_file), trial.model_sha256, "models")

    def push_file(self, local: Path, digest: str | None, folder: str) -> str:
        """Copy ``local`` into the target's work folder (``<folder>/<digest>/<name>``) unless a copy of that size is
        already there, after checking it still has the digest the trial recorded; returns its path on the device."""
        from edgebench.backends.model_file import file_digest

        what = "model file" if folder == "models" else "file"
        if not local.is_file():
            raise OSError(f"{what} {local} is not on this machine any more: it cannot be copied to {self.name}")
        if digest is not None and file_digest(local) != digest:
            raise OSError(f"{what} {local} changed since the trial was made: make it again (run it again)")
        remote = f"{self.workdir}/{folder}/{digest or 'unhashed'}/{local.name}"
        size = local.stat().st_size
        q = shlex.quote(remote)
        have = sh_text(self.shell, f"[ -f {q} ] && wc -c < {q} || echo none", 60, None)
        if digest is None or have.stdout.strip() != str(size):
            self.shell.push(local, remote)
        return remote

    def run_edgebench(self, args: list[str], limit_s: float) -> subprocess.CompletedProcess[str]:
        """Run the device's ``edgebench ARGS`` in a guarded session (killed on the device if the connection
        drops or ``limit_s`` passes); a connection failure is a usage error naming the target."""
        self.edgebench_info()
        session = f"{self.workdir}/session-{os.urandom(6).hex()}"
        body = "exec " + self._python("-m edgebench " + " ".join(shlex.quote(a) for a in args))
        proc = self.shell.start(self.as_root(guarded(body, f"{session}/guard", payload=False)))
        stdout, stderr, status = _exchange(proc, "", limit_s, self.shell.stdin_can_end())
        failure = self.connection_failure(proc.returncode or 0, stderr)
        if failure is None and status is None:
            failure = self.dropped(proc.returncode)
        if failure is not None:
            raise UsageError("--target", f"connection lost: {failure}")
        return subprocess.CompletedProcess(args, status, stdout, stderr)

    def _lost(self, trial: Trial, session: str, reason: str) -> TrialBundle:
        """A trial whose connection dropped: what the device measured up to then, fetched over a new connection
        when the device can still be reached, as a ``crashed`` bundle."""
        events: list[Any] = []
        # the device may be away a while (an adb server reconnects a TCP device 5-11 s after a drop); the session
        # folder is removed in the same script, so nothing is left once it answers
        q = shlex.quote(session)
        script = f"cat {q}/tmp/edgebench-*/events.jsonl 2>/dev/null; rm -rf {q}; echo {_FETCHED}"
        deadline = time.monotonic() + _RECONNECT_S
        while True:
            try:
                done = sh_text(self.shell, self.as_root(script), 30, None)
            except (OSError, subprocess.SubprocessError):
                done = None
            if done is not None and done.stdout.rstrip().endswith(_FETCHED):
                try:
                    with tempfile.TemporaryDirectory() as tmp:
                        path = Path(tmp) / "events.jsonl"
                        path.write_text(done.stdout.rstrip().removesuffix(_FETCHED))
                        events = read_events(path)
                except (OSError, ValueError):
                    events = []
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(1.0)
        steps = len(steps_of(events, "train"))
        return TrialBundle(
            trial=trial,
            events=events,
            env=self._marks(),
            failure=Failure(status="crashed", reason=f"{reason} (after {steps} measured steps)"),
        )

    def _remove(self, session: str) -> None:
        sh_text(self.shell, self.as_root(f"rm -rf {shlex.quote(session)}"), 30, None)

    def close(self) -> None:
        """End the restore watcher (after a clean restore it has nothing to do) and the transport's connection."""
        if self._sysfs is not None:
            self._sysfs.close()
            self._sysfs = None
        self.shell.close()


class RootedShell:
    """A target's shell whose scripts run as root when the target uses root (``--root``): the command, its
    ``taskset`` and the sampler then read and run what only root may."""

    def __init__(self, shell: Shell, as_root: Callable[[str], str]) -> None:
        self._shell, self._as_root = shell, as_root
        self.name = shell.name

    def run(
        self, script: str, *, timeout_s: float | None = None, stdin: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        return self._shell.run(self._as_root(script), timeout_s=timeout_s, stdin=stdin)

    def start(self, script: str) -> subprocess.Popen[bytes]:
        return self._shell.start(self._as_root(script))

    def push(self, local: Path, remote: str) -> None:
        self._shell.push(local, remote)

    def pull(self, remote: str, local: Path) -> None:
        self._shell.pull(remote, local)

    def workdir(self) -> str:
        return self._shell.workdir()


def _exchange(
    proc: subprocess.Popen[bytes], payload: str, limit_s: float, stdin_can_end: bool = True
) -> tuple[str, str, int | None]:
    """Send ``payload`` and keep stdin open (the device's watcher reads it to tell a drop from an end), read stdout
    up to the guarded session's :data:`~edgebench.targets.guard.ENDED_LINE`, then close stdin so the watcher ends.

    Returns stdout before the end line, stderr, and the body's exit status from that line; None when stdout ended
    without it (the connection dropped, or the client was killed past ``limit_s``), whatever the client's exit code.
    Stdout is not read to its end: over adb the watcher's stdin is the session's stdout, open until stdin closes.

    Without ``stdin_can_end`` (an old phone: no shell protocol, stdin a raw pty) closing stdin tells the device
    nothing, so once the end line is read the client is stopped: the hang-up ends the watcher, which finds the
    body's ``done`` mark and only tidies up (no 30 s wait, then a kill, for every trial).
    """
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    errors: list[bytes] = []
    drain = threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)  # type: ignore[union-attr]
    drain.start()
    timer = threading.Timer(limit_s, proc.kill)
    timer.start()
    lines: list[str] = []
    status: int | None = None
    try:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(payload.encode())
            proc.stdin.flush()
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode(errors="replace")
            words = line.split()
            if len(words) == 2 and words[0] == ENDED_LINE and words[1].lstrip("-").isdigit():
                status = int(words[1])
                break
            lines.append(line)
    finally:
        timer.cancel()
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        if status is not None and not stdin_can_end:
            proc.terminate()
        try:
            proc.wait(30)  # the watcher sees stdin end, tidies up, and the session closes
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        drain.join(10)
    return "".join(lines), b"".join(errors).decode(errors="replace"), status
