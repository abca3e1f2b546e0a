"""Emulated phones for the adb-target tests: the shared ``adbd-sim`` (an adbd speaking the adb transport protocol
as AOSP's does) reached by Debian's real ``adb`` client through an adb server on a port of the tests' own.

``../shared/tools/adbd-sim`` beside the checkout holds the emulator (CI runs with ``shared/`` there).  Each device
is started on first use and kept for the session: ``adb connect 127.0.0.1:PORT`` as a phone with ``adb tcpip`` on
would be; at the end every device, and the adb server, is stopped.  The user's adb server (port 5037) is never
touched: ``ANDROID_ADB_SERVER_PORT`` points every ``adb`` this session runs at the tests' server.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.paths import free_port

INSTALL = "apt-get install -y adb mksh"
REPO = Path(__file__).resolve().parents[1]
SIM_DIR = REPO / ".." / "shared" / "tools" / "adbd-sim"
SIM = SIM_DIR / "adbd_sim.py"
SRC = REPO / "src"


@dataclass
class Phone:
    """One emulated phone: its serial for ``adb -s``, the emulator's process, its files and its log."""

    serial: str
    process: subprocess.Popen[bytes]
    root_dir: Path
    log: Path

    @property
    def data(self) -> Path:
        """The phone's ``/data`` as this machine sees it."""
        return self.root_dir / "data"

    @property
    def workdir(self) -> Path:
        """The adb target's default work folder on the phone, as this machine sees it."""
        return self.data / "local" / "tmp" / "edgebench"

    def drop(self) -> None:
        """Every connection to the phone dropped (a cable pulled and plugged back): the adb server reconnects."""
        os.kill(self.process.pid, signal.SIGUSR1)

    def adb(self, *args: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["adb", "-s", self.serial, *args], capture_output=True, text=True, timeout=timeout_s)

    def wait_online(self, timeout_s: float = 40) -> None:
        """Until ``adb -s SERIAL get-state`` says ``device`` (the server reconnects a TCP device on its own)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            subprocess.run(["adb", "connect", self.serial], capture_output=True, timeout=30)
            if self.adb("get-state", timeout_s=30).stdout.strip() == "device":
                return
            time.sleep(0.5)
        pytest.fail(f"{self.serial} did not come back within {timeout_s:g} s; log: {self.log}")

    def target_config(self, **extra: object) -> dict[str, object]:
        """A configured adb target for this phone whose Python agent is this interpreter with this checkout."""
        return {"url": f"adb://{self.serial}", "python": sys.executable, "env": {"PYTHONPATH": str(SRC)}, **extra}


@dataclass
class AdbdSim:
    """The tests' adb server and the emulated phones started so far (by name, each once per session)."""

    folder: Path
    server_port: int
    phones: dict[str, Phone] = field(default_factory=dict)

    def phone(self, name: str, *options: str) -> Phone:
        """The phone called ``name``, started with adbd-sim's ``options`` the first time it is asked for."""
        if name in self.phones:
            phone = self.phones[name]
            phone.wait_online()
            return phone
        root = self.folder / name
        log = self.folder / f"{name}.log"
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, str(SIM), "--port", str(port), "--root-dir", str(root), "-v", "--log", str(log), *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert process.stdout is not None
        first = process.stdout.readline().decode(errors="replace").strip()
        if "listening on" not in first:
            process.kill()
            pytest.fail(f"adbd-sim did not start: {first or process.stdout.read().decode(errors='replace')}")
        if "(fs: namespace)" not in first:
            process.kill()
            pytest.fail(f"adbd-sim runs without its /data namespace ({first}); it needs root and a /data folder")
        phone = Phone(serial=f"127.0.0.1:{port}", process=process, root_dir=root, log=log)
        self.phones[name] = phone
        phone.wait_online()
        return phone

    def stop(self) -> None:
        for phone in self.phones.values():
            phone.process.terminate()
            try:
                phone.process.wait(10)
            except subprocess.TimeoutExpired:
                phone.process.kill()
                phone.process.wait()
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run(["adb", "kill-server"], capture_output=True, timeout=30)


def start_adbd_sim() -> AdbdSim:
    """The tests' adb server on a free port; fails with the fix when adb, mksh, the emulator or root is missing."""
    for tool in ("adb", "mksh", "setsid"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is needed to emulate a phone: {INSTALL}")
    if not SIM.is_file():
        pytest.fail(f"the emulated adbd is not at {SIM.resolve()}: check out shared/ beside this repository")
    if os.geteuid() != 0:
        pytest.fail("adbd-sim needs root for its private /data mount namespace (run the adb tests as root)")
    if not Path("/data").is_dir():
        Path("/data").mkdir()  # adbd-sim binds the phone's /data over it in its own namespace; it stays empty
    folder = Path(tempfile.mkdtemp(prefix="adbd-sim-", dir="/tmp"))
    folder.chmod(0o755)  # the phone's unrooted shell (uid 2000) walks through it
    port = free_port()
    os.environ["ANDROID_ADB_SERVER_PORT"] = str(port)
    done = subprocess.run(["adb", "start-server"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.fail(f"the adb server did not start on port {port}: {done.stderr.strip()}")
    return AdbdSim(folder=folder, server_port=port)


@pytest.fixture(scope="session")
def adbd_sim() -> Iterator[AdbdSim]:
    previous = os.environ.get("ANDROID_ADB_SERVER_PORT")
    sim = start_adbd_sim()
    try:
        yield sim
    finally:
        sim.stop()
        shutil.rmtree(sim.folder, ignore_errors=True)
        if previous is None:
            os.environ.pop("ANDROID_ADB_SERVER_PORT", None)
        else:
            os.environ["ANDROID_ADB_SERVER_PORT"] = previous
