"""The adb target against Debian's real ``adb`` client and emulated phones (``tests/adbd.py``): the agent trial, root
over TCP, dropped connections, old phones.  Every defect of issue 26 has its test here."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

import pytest

from edgebench.records.trial import Trial
from edgebench.targets import open_target
from edgebench.targets.named import TargetConfig
from tests.adbd import AdbdSim, Phone, adbd_sim  # noqa: F401  (the session fixture)

PHONE_TREE = Path(__file__).parent / "fixtures" / "sysfs" / "android_phone"


def _open(phone: Phone, name: str, **extra: object):
    config = TargetConfig(name=name, **phone.target_config(**extra))
    return open_target(name, named={name: config})


def _left_on(phone: Phone) -> list[str]:
    work = phone.workdir
    return sorted(p.name for p in work.iterdir()) if work.is_dir() else []


def _finishing(work, what: str, hang_s: float = 240):
    """``work()``'s value; a test failure, not a wait of the trial's timeout + 6 min, when it hangs."""
    box: list = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(hang_s)
    if thread.is_alive():
        pytest.fail(f"{what} hung (still running after {hang_s:g} s)")
    assert box, f"{what} raised (see the thread's traceback above)"
    return box[0]


def test_full_agent_trial_over_adb_ends_when_the_agent_does(adbd_sim):  # noqa: F811
    """adbd gives a shell one socket for stdin and stdout: the session's watcher holds stdin, so stdout never ends
    while it runs; the bundle must be read when the agent finishes, not at the end of stdout."""
    from edgebench.launch.trial import run_trial

    phone = adbd_sim.phone("rooted", "--rooted")
    target = _open(phone, "rooted")
    try:
        trial = Trial(model="lenet", batch_size=4, steps=2, warmup=1, infer_steps=0, idle_s=0, timeout_s=120)
        run = _finishing(lambda: run_trial(trial, target=target), "the agent trial over adb")
        assert run.result.ok, run.result.reason
    finally:
        target.close()
    assert not [n for n in _left_on(phone) if n.startswith("session-")]


def test_root_over_tcp_waits_for_adbd_to_come_back(adbd_sim):  # noqa: F811
    """``adb root`` restarts adbd: Debian's client waits 6 s and exits 1 while the phone is away ~10 s; that is no
    refusal.  The IP:port serial is connected again and the phone is rooted."""
    phone = adbd_sim.phone("rootable")
    target = _open(phone, "rootable", root=True)
    try:
        assert target.is_root()
        assert target._root_wrapper == ""  # adbd itself runs as root: no su form was needed
        assert target.shell.run("id -u").stdout.strip() == b"0"
    finally:
        target.close()
    assert phone.adb("unroot").returncode in (0, 1)  # leave it as found for the other tests
    phone.wait_online()


def test_production_build_refuses_root_in_one_line(adbd_sim):  # noqa: F811
    from edgebench.errors import UsageError

    phone = adbd_sim.phone("user-build", "--build", "user")
    with pytest.raises(UsageError, match="gives no root: uid 2000"):
        _open(phone, "user-build", root=True)
    assert phone.adb("shell", "id -u").stdout.strip() == "2000"


def test_network_serial_is_connected_first_and_offline_is_not_the_prompt(adbd_sim):  # noqa: F811
    from edgebench.errors import UsageError
    from edgebench.targets.adb import pick_serial

    phone = adbd_sim.phone("plain")
    subprocess.run(["adb", "disconnect", phone.serial], capture_output=True, timeout=30)
    assert pick_serial(f"adb://{phone.serial}") == phone.serial  # `adb connect`ed by edgebench
    gone = f"127.0.0.1:{_closed_port()}"
    with pytest.raises(UsageError, match=f"{gone} is not attached"):
        pick_serial(f"adb://{gone}")
    phone.process.send_signal(signal.SIGSTOP)  # the phone stops answering: the server marks it offline
    try:
        subprocess.run(["adb", "-s", phone.serial, "reconnect"], capture_output=True, timeout=30)
        with pytest.raises(UsageError) as raised:
            pick_serial(f"adb://{phone.serial}")
    finally:
        phone.process.send_signal(signal.SIGCONT)
    assert "accept the debugging prompt" not in str(raised.value)
    assert "offline; reconnect it" in str(raised.value), raised.value
    phone.wait_online()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
