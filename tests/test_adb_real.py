"""The adb target against Debian's real ``adb`` client and emulated phones (``tests/adbd.py``): the agent trial, root
over TCP, dropped connections, old phones.  Every defect of issue 26 has its test here."""

from __future__ import annotations

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
