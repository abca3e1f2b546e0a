"""``adb://SERIAL`` (or ``adb://`` for the only attached device): a phone through the platform's ``adb`` client.

Only the client's command line is used (``adb devices``, ``adb -s SERIAL shell``, ``push``, ``pull``, ``root``), so
a user's own platform-tools and Debian's ``adb`` package work the same.  The phone's shell is ``mksh`` with toybox;
every script edgebench sends is POSIX ``sh``.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from edgebench.errors import UsageError
from edgebench.sensors import android_thermal
from edgebench.targets.base import TargetCapabilities
from edgebench.targets.named import TargetConfig
from edgebench.targets.remote import RemoteTarget
from edgebench.targets.remote_sysfs import sh_text
from edgebench.targets.shell import ClientShell

#: How long a phone may be away while adbd restarts for ``adb root`` (Debian's adb server retries a TCP device
#: about 10 s after it dropped).
ROOT_RESTART_S = 60.0
_ADB_MISSING = "the adb client is not on PATH; install Android platform-tools (Debian: apt-get install -y adb)"


def adb_command() -> str:
    found = shutil.which("adb")
    if found is None:
        raise UsageError("--target", _ADB_MISSING)
    return found


def attached_devices() -> list[tuple[str, str]]:
    """``(serial, state)`` of each device ``adb devices`` lists (``device``, ``unauthorized``, ``offline``)."""
    done = subprocess.run([adb_command(), "devices"], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise UsageError("--target", f"`adb devices` failed: {done.stderr.strip() or done.returncode}")
    pairs = []
    for line in done.stdout.splitlines()[1:]:
        words = line.split()
        if len(words) >= 2:
            pairs.append((words[0], words[1]))
    return pairs


#: A device serial as adb prints it (``8A2X0KDLN``, ``emulator-5554``, ``192.168.1.23:5555``, ``usb:1-1``):
#: never starting with ``-``, which adb would read as an option, and nothing a shell or adb gives a meaning to.
_SERIAL = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._:-]*$")


def check_serial(serial: str, field: str = "--target") -> str:
    """``serial`` if it is a device serial; else one line naming ``field``.  The one serial validator."""
    if not _SERIAL.match(serial) or len(serial) > 255:
        raise UsageError(field, f"{serial!r} is not a device serial (letters, digits, and .-_: after the first)")
    return serial


def pick_serial(url: str) -> str:
    """The serial ``adb://SERIAL`` names, checked against ``adb devices``; ``adb://`` picks the only device."""
    if not url.startswith("adb://"):
        raise UsageError("--target", f"{url!r} is not adb://SERIAL")
    serial = url.removeprefix("adb://").strip("/")
    if serial:
        check_serial(serial)
    devices = attached_devices()
    listed = ", ".join(f"{s} ({state})" for s, state in devices) or "none"
    if not serial:
        ready = [s for s, state in devices if state == "device"]
        if len(ready) != 1:
            raise UsageError(
                "--target", f"adb:// needs exactly one attached device, adb lists: {listed}; give adb://SERIAL"
            )
        return ready[0]
    state = dict(devices).get(serial)
    if state != "device" and is_network_serial(serial):
        connect(serial)
        devices = attached_devices()
        state = dict(devices).get(serial)
        listed = ", ".join(f"{s} ({st})" for s, st in devices) or "none"
    if state is None:
        raise UsageError("--target", f"{serial} is not attached (adb lists: {listed})")
    if state == "unauthorized":
        raise UsageError("--target", f"{serial} is unauthorized; unlock the phone and accept the debugging prompt")
    if state != "device":
        raise UsageError(
            "--target", f"{serial} is {state}; reconnect it (replug the cable, `adb reconnect`, or `adb connect`)"
        )
    return serial


def is_network_serial(serial: str) -> bool:
    """``HOST:PORT`` (a phone over TCP or Wi-Fi, ``adb tcpip``), which ``adb connect`` must reach first."""
    host, colon, port = serial.rpartition(":")
    return bool(colon and host and port.isdigit())


def connect(serial: str, timeout_s: float = 30) -> str | None:
    """``adb connect HOST:PORT``, then the state the server gives it (None when it could not be reached)."""
    adb = adb_command()
    try:
        subprocess.run([adb, "connect", check_serial(serial)], capture_output=True, text=True, timeout=timeout_s)
        done = subprocess.run([adb, "-s", serial, "get-state"], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


class AdbShell(ClientShell):
    """``adb -s SERIAL shell`` for scripts (its stdin forwarded), ``push`` and ``pull`` for files."""

    def __init__(self, serial: str, *, workdir: str, env: dict[str, str] | None = None) -> None:
        super().__init__(workdir=workdir, env=env)
        self.serial = check_serial(serial)
        self.name = f"adb://{serial}"
        self.adb = adb_command()
        self._stdin_can_end: bool | None = None

    def _args(self, *rest: str) -> list[str]:
        return [self.adb, "-s", self.serial, *rest]

    def command_line(self, script: str) -> list[str]:
        return self._args("shell", script)

    def push(self, local: Path, remote: str) -> None:
        """A file to ``remote``; a folder REPLACES ``remote`` (``adb push DIR R`` into an existing R would land in
        R/DIR, and files deleted here would stay there to be run)."""
        if Path(local).is_dir():
            cleared = self.run(f"rm -rf {shlex.quote(remote)}", timeout_s=60)
            if cleared.returncode != 0:
                raise OSError(f"cannot replace {remote} on {self.name}: {cleared.stderr.decode().strip()}")
        # absolute paths: a relative local one starting with `-` would be an option of adb's
        done = subprocess.run(self._args("push", str(Path(local).absolute()), remote), capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError(f"adb push {local} {remote} failed: {(done.stderr or done.stdout).strip()}")

    def pull(self, remote: str, local: Path) -> None:
        done = subprocess.run(self._args("pull", remote, str(Path(local).absolute())), capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError(f"adb pull {remote} failed: {(done.stderr or done.stdout).strip()}")

    def state(self) -> str:
        """``adb get-state``: ``device``, ``offline``, ``unauthorized``... or "" when adb does not know the device."""
        try:
            done = subprocess.run(self._args("get-state"), capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    def stdin_can_end(self) -> bool:
        """Whether the phone's adbd speaks the shell protocol (``shell_v2``, Android 7 and later): only then can the
        client tell a shell that its stdin ended.  Before it, a shell's stdin is a pty in raw mode, which has no
        end but a hang-up.  Asked once (``adb features``: the features the phone announced when it connected)."""
        if self._stdin_can_end is None:
            try:
                done = subprocess.run(self._args("features"), capture_output=True, text=True, timeout=30)
            except subprocess.TimeoutExpired:
                return True  # unknown: the protocol's behaviour, and a wait bounded by the exchange's own
            if done.returncode != 0:
                return True
            self._stdin_can_end = "shell_v2" in done.stdout.replace("\n", ",").split(",")
        return self._stdin_can_end

    def root(self) -> bool:
        """``adb root``: restart the phone's adbd as root; False on a production build that refuses.

        adbd restarts, so every connection drops: over TCP the client may give up waiting (``timeout expired``,
        exit 1) while the phone is still coming back, so the exit code says nothing; what adbd printed does.
        """
        done = subprocess.run(self._args("root"), capture_output=True, text=True, timeout=60)
        said = (done.stdout + done.stderr).lower()
        if "cannot run as root" in said or "not found" in said or "unauthorized" in said:
            return False
        if done.returncode != 0 and "restarting" not in said and "already running as root" not in said:
            return False
        return self.wait_back()

    def unroot(self) -> None:
        """``adb unroot``, then wait for the phone: it is left as it was found."""
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run(self._args("unroot"), capture_output=True, text=True, timeout=60)
            self.wait_back()

    def wait_back(self, timeout_s: float = ROOT_RESTART_S) -> bool:
        """Until the phone is a ``device`` again after adbd restarted (a TCP serial is ``adb connect``ed again, as
        the server retries it only every ~10 s); False past ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            left = max(1.0, deadline - time.monotonic())
            if is_network_serial(self.serial):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    subprocess.run([self.adb, "connect", self.serial], capture_output=True, timeout=min(10, left))
            with contextlib.suppress(subprocess.TimeoutExpired):
                subprocess.run(self._args("wait-for-device"), capture_output=True, timeout=min(5, left))
            if self.state() == "device":
                return True
            time.sleep(0.5)
        return False


class AdbTarget(RemoteTarget):
    scheme = "adb"
    default_workdir = "/data/local/tmp/edgebench"
    #: A phone reports its own thermal status (``dumpsys thermalservice``); its files come through a mirror.
    capabilities = TargetCapabilities(thermal_status=True, mirrored_sysfs=True)
    shell: AdbShell

    def make_shell(self, config: TargetConfig) -> AdbShell:
        return AdbShell(pick_serial(config.url), workdir=config.workdir or self.default_workdir, env=config.env)

    def connection_failure(self, returncode: int, stderr: str) -> str | None:
        """adb says ``error: device 'X' not found`` / ``no devices`` / ``device offline`` when the phone is gone."""
        text = stderr.strip().splitlines()
        last = text[-1] if text else ""
        if returncode != 0 and last.startswith(("error:", "adb: error:")):
            return f"{self.name}: {last.removeprefix('adb: ').removeprefix('error: ')}"
        return None

    def dropped(self, returncode: int | None) -> str:
        """The real client exits 0 with nothing on stderr when the device goes away mid-session: ask the server."""
        state = self.shell.state()
        if state == "device":
            return super().dropped(returncode)
        return f"{self.name}: the connection dropped (adb says the device is {state or 'gone'})"

    def thermal_status(self) -> int | None:
        """The thermal status the phone reports (``dumpsys thermalservice``, 0 none .. 6 shutdown); None where it
        reports none (before Android 10, no thermal HAL) or cannot be asked (offline, too slow)."""
        try:
            done = sh_text(self.shell, android_thermal.COMMAND, android_thermal.TIMEOUT_S, None)
        except (subprocess.TimeoutExpired, OSError):
            return None
        parsed = android_thermal.parse_thermalservice(done.stdout)
        return parsed.status if parsed else None

    def try_transport_root(self) -> bool:
        """``adb root``; a phone that does not come back as root within the bounds is unrooted again (never left
        rooted by a run that gave up) and the su forms are tried next."""
        if not self.shell.root():
            if self.shell.state() != "device":
                self.shell.unroot()
                raise UsageError(
                    "--root", f"{self.name} did not come back within {ROOT_RESTART_S:g} s of `adb root`; reconnect it"
                )
            return False
        for _ in range(10):  # adbd restarts; its first shells may still be the old one's
            done = sh_text(self.shell, "id -u", 30, None)
            if done.stdout.strip() == "0":
                self._uid = 0
                return True
            time.sleep(0.2)
        self.shell.unroot()
        return False
