"""adb targets through a stand-in ``adb`` on PATH (tests/fixtures/adb/adb) that speaks the real client's command
line and runs the "phone" side with ``mksh`` against a fixture tree: rooted by ``adb root``, rooted by ``su -c``
only, and unrooted.  No phone has met this code."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from edgebench.errors import UsageError
from edgebench.host.frequency import FrequencyControl
from edgebench.targets import open_target
from edgebench.targets.named import TargetConfig
from tests.paths import FIXTURES, SRC

STAND_IN = FIXTURES / "adb"
PHONE = FIXTURES / "sysfs" / "android_phone"
BATTERY_VOLTAGE = "/sys/class/power_supply/battery/voltage_now"
INSTALL = "apt-get install -y openssh-server mksh busybox adb"


@pytest.fixture
def phones(monkeypatch):
    """Three attached stand-in phones sharing one fixture tree, whose battery voltage only root may read."""
    if shutil.which("mksh") is None:
        pytest.fail(f"mksh (Android's shell) is needed: {INSTALL}")
    base = Path(tempfile.mkdtemp(prefix="fake-adb-", dir="/tmp"))
    base.chmod(0o755)  # the unrooted shell runs as nobody
    state = base / "state"
    state.mkdir()
    (state / "devices.json").write_text(
        json.dumps({"R1": {"root": "adb"}, "S1": {"root": "su"}, "U1": {"root": "none"}})
    )
    tree = base / "tree"
    shutil.copytree(PHONE, tree)
    (tree / BATTERY_VOLTAGE.lstrip("/")).chmod(stat.S_IRUSR | stat.S_IWUSR)
    work = base / "work"
    work.mkdir(mode=0o777)
    work.chmod(0o1777)
    monkeypatch.setenv("PATH", f"{STAND_IN}:{os.environ['PATH']}")
    monkeypatch.setenv("EDGEBENCH_FAKE_ADB", str(state))
    opened = []

    def open_phone(serial: str, **extra):
        fields = {"url": f"adb://{serial}", "name": serial.lower(), "sysfs_root": str(tree), "workdir": str(work)}
        config = TargetConfig(**{**fields, **extra})
        opened.append(open_target(config.name, named={config.name: config}))
        return opened[-1]

    open_phone.tree = tree
    open_phone.work = work
    open_phone.state = state
    yield open_phone
    for target in opened:
        target.close()
    shutil.rmtree(base)


def test_adb_alone_needs_exactly_one_device_and_names_them(phones):
    with pytest.raises(UsageError, match=r"adb:// needs exactly one attached device, adb lists: R1 \(device\), S1"):
        open_target("adb://")
    (phones.state / "devices.json").write_text(json.dumps({"ONLY": {"root": "none"}}))
    target = open_target("adb://")
    assert target.shell.serial == "ONLY"
    target.close()
    with pytest.raises(UsageError, match="NOPE is not attached"):
        open_target("adb://NOPE")


def test_unrooted_phone_reports_what_it_cannot_read_and_cannot_be_rooted(phones):
    from edgebench.sensors.inventory import inventory

    phone = phones("U1")
    assert not phone.is_root()
    with pytest.raises(PermissionError, match="permission denied: unrooted"):
        phone.sysfs().read_text(BATTERY_VOLTAGE)
    reports = {r.name: r for r in inventory(phone.sysfs())}
    assert not reports["power_supply"].available
    assert "not readable" in reports["power_supply"].reason
    assert reports["cpu_freq"].available  # what the shell user may read is still read
    assert reports["cpu_freq"].values
    with pytest.raises(UsageError, match="gives no root"):
        phones("U1", root=True)


def test_adb_root_and_su_fallback_both_root_the_phone(phones):
    rooted = phones("R1", root=True)
    assert rooted.is_root()
    assert rooted.sysfs().read_int(BATTERY_VOLTAGE) is not None  # root reads what the shell user cannot
    su = phones("S1", root=True)
    assert su.is_root()
    assert su._root_wrapper == "su -c"  # su -0 was tried first and refused by this su
    assert su.allowed_cores()


def test_frequencies_are_pinned_and_restored_through_su(phones):
    phone = phones("S1", root=True)
    policy = phones.tree / "sys/devices/system/cpu/cpufreq/policy4"
    governor = (policy / "scaling_governor").read_text().strip()
    with FrequencyControl(phone.sysfs(), is_root=phone.is_root) as control:
        applied = control.pin((4,), 10**9)
        assert (policy / "scaling_governor").read_text().strip() == "userspace"
        assert (policy / "scaling_setspeed").read_text().strip() == str(applied["policy4"])
    assert (policy / "scaling_governor").read_text().strip() == governor
    assert not list(phones.work.glob("restore-*.sh"))


def test_frequencies_without_root_are_refused_with_the_fix(phones):
    phone = phones("U1")
    control = FrequencyControl(phone.sysfs(), is_root=phone.is_root)
    with pytest.raises(UsageError, match=r"needs root .*add --root"):
        control.check()


def test_edgebench_trial_runs_on_the_phone_through_its_agent(phones):
    from edgebench.launch.trial import run_trial
    from edgebench.records.trial import Trial

    src = str(SRC)
    phone = phones("R1", root=True, python=sys.executable, env={"PYTHONPATH": src})
    trial = Trial(model="lenet", batch_size=4, steps=2, warmup=1, infer_steps=0, idle_s=0)
    run = run_trial(trial, target=phone)
    assert run.result.ok, run.result.reason
    assert run.result.target == "r1"
    assert not list(phones.work.glob("session-*"))


def test_phone_without_edgebench_is_one_line_naming_the_fix(phones):
    from edgebench.launch.trial import run_trial
    from edgebench.records.trial import Trial

    phone = phones("U1", python="/nonexistent/python3")
    with pytest.raises(UsageError, match=r"has no edgebench .* or run your own binary with --command"):
        run_trial(Trial(model="lenet", steps=1), target=phone)


def test_command_trial_on_an_unrooted_phone_gives_latency(phones, tmp_path):
    from edgebench.launch.trial import run_trial
    from edgebench.records.trial import Trial

    binary = tmp_path / "bench.sh"
    binary.write_text('i=0; while [ $i -lt 5 ]; do i=$((i+1)); echo "iter $i"; done\n')
    phone = phones("U1")
    trial = Trial(model="bench", command="sh bench.sh", push=(str(binary),), step_pattern=r"^iter \d+$", steps=3,
                  warmup=1, idle_s=0, sample_interval_ms=50.0)  # fmt: skip
    run = run_trial(trial, target=phone)
    assert run.result.ok, run.result.reason
    assert run.result.trial.steps == 3
    assert (phones.work / "bench.sh").exists()  # pushed through adb push into the target's work folder


def test_a_language_model_generates_on_the_phone_through_its_agent(phones):
    """An inference trial of a small LM on the phone: its time to first token and decode speed per context, and its
    KV cache, measured there."""
    from edgebench.config.trial import make_trial
    from edgebench.launch.trial import run_trial

    phone = phones("R1", root=True, python=sys.executable, env={"PYTHONPATH": str(SRC)})
    trial = make_trial(model="lm_1m", mode="infer", batch_size=1, input_shape=(16,), steps=2, warmup=1, idle_s=0,
                       contexts=(8, 32), decode_tokens=3, generations=1)  # fmt: skip
    run = run_trial(trial, target=phone)
    assert run.result.ok, run.result.reason
    lm = run.result.language_model
    assert [g.context_tokens for g in lm.generation] == [8, 32] and all(g.ttft_ms > 0 for g in lm.generation)
    assert lm.generation_memory is not None and lm.generation_memory.kv_cache_bytes == 2048 * 35
