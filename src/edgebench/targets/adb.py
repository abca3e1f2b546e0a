"""``adb://SERIAL`` (or ``adb://`` for the only attached device): a phone through the platform's ``adb`` client.

Only the client's command line is used (``adb devices``, ``adb -s SERIAL shell``, ``push``, ``pull``, ``root``), so
a user's own platform-tools and Debian's ``adb`` package work the same.  The phone's shell is ``mksh`` with toybox;
every script edgebench sends is POSIX ``sh``.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from edgebench.errors import UsageError
from edgebench.targets.named import TargetConfig
from edgebench.targets.remote import RemoteTarget
from edgebench.targets.remote_sysfs import sh_text
from edgebench.targets.shell import ClientShell

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


def pick_serial(url: str) -> str:
    """The serial ``adb://SERIAL`` names, checked against ``adb devices``; ``adb://`` picks the only device."""
    if not url.startswith("adb://"):
        raise UsageError("--target", f"{url!r} is not adb://SERIAL")
    serial = url.removeprefix("adb://").strip("/")
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
    if state is None:
        raise UsageError("--target", f"{serial} is not attached (adb lists: {listed})")
    if state != "device":
        raise UsageError("--target", f"{serial} is {state}; unlock the phone and accept the debugging prompt")
    return serial


class AdbShell(ClientShell):
    """``adb -s SERIAL shell`` for scripts (its stdin forwarded), ``push`` and ``pull`` for files."""

    def __init__(self, serial: str, *, workdir: str, env: dict[str, str] | None = None) -> None:
        super().__init__(workdir=workdir, env=env)
        self.serial = serial
        self.name = f"adb://{serial}"
        self.adb = adb_command()

    def _args(self, *rest: str) -> list[str]:
        return [self.adb, "-s", self.serial, *rest]

    def command_line(self, script: str) -> list[str]:
        return self._args("shell", script)

    def push(self, local: Path, remote: str) -> None:
        done = subprocess.run(self._args("push", str(local), remote), capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError(f"adb push {local} {remote} failed: {(done.stderr or done.stdout).strip()}")

    def pull(self, remote: str, local: Path) -> None:
        done = subprocess.run(self._args("pull", remote, str(local)), capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError(f"adb pull {remote} failed: {(done.stderr or done.stdout).strip()}")

    def state(self) -> str:
        """``adb get-state``: ``device``, ``offline``, ``unauthorized``... or "" when adb does not know the device."""
        try:
            done = subprocess.run(self._args("get-state"), capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            return ""
        return done.stdout.strip() if done.returncode == 0 else ""

    def root(self) -> bool:
        """``adb root``: restart the phone's adbd as root; False on a production build that refuses."""
        done = subprocess.run(self._args("root"), capture_output=True, text=True, timeout=60)
        said = (done.stdout + done.stderr).lower()
        if done.returncode != 0 or "cannot run as root" in said:
            return False
        subprocess.run(self._args("wait-for-device"), capture_output=True, timeout=60)
        return True


class AdbTarget(RemoteTarget):
    scheme = "adb"
    default_workdir = "/data/local/tmp/edgebench"

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

    def try_transport_root(self) -> bool:
        if not self.shell.root():
            return False
        for _ in range(10):  # adbd restarts; its first shells may still be the old one's
            done = sh_text(self.shell, "id -u", 30, None)
            if done.stdout.strip() == "0":
                self._uid = 0
                return True
            time.sleep(0.2)
        return False
