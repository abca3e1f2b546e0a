"""The adb target against Debian's real ``adb`` client and emulated phones (``tests/adbd.py``): the agent trial, root
over TCP, dropped connections, old phones.  Every defect of issue 26 has its test here."""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from edgebench.records.trial import Trial
from edgebench.targets import open_target
from edgebench.targets.named import TargetConfig
from tests.adbd import AdbdSim, Phone, adbd_sim  # noqa: F401  (the session fixture)
from tests.native import native_sampler
from tests.paths import FIXTURES

PHONE_TREE = FIXTURES / "sysfs" / "android_phone"
#: A frequency of policy0 (cpu0-3) in the android_phone tree: the emulated phone's /proc is this machine's.
FREQ_KHZ = 1_017_600


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
        cold = run.result.cold_start  # timed on the phone, in its fresh worker
        assert cold is not None and cold.model_load_s and cold.first_step_ms and cold.first_step_mode == "train"
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
        target.close()  # the phone stays rooted: no other test asks for this one


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


def _bench(tmp_path: Path, iterations: int, pause_s: float = 0.0) -> Path:
    binary = tmp_path / "bench.sh"
    nap = f"sleep {pause_s}; " if pause_s else ""
    binary.write_text(f'i=0; while [ $i -lt {iterations} ]; do i=$((i+1)); {nap}echo "iter $i"; done\n')
    return binary


def _command_trial(binary: Path, **extra: object) -> Trial:
    fields = dict(model="bench", command=f"sh {binary.name}", push=(str(binary),), step_pattern=r"^iter \d+$",
                  steps=3, warmup=1, idle_s=0, sample_interval_ms=50.0)  # fmt: skip
    return Trial(**{**fields, **extra})


def test_command_trials_unrooted_and_rooted_give_latency(adbd_sim, tmp_path):  # noqa: F811
    from edgebench.launch.trial import run_trial

    binary = _bench(tmp_path, 6)
    for name, options, root in (("plain", (), False), ("rooted", ("--rooted",), True)):
        phone = adbd_sim.phone(name, *options)
        target = _open(phone, name, root=root)
        try:
            run = _finishing(lambda t=target: run_trial(_command_trial(binary), target=t), f"a command trial on {name}")
        finally:
            target.close()
        assert run.result.ok, run.result.reason
        assert run.samples_csv and len(run.samples_csv.splitlines()) > 1
        assert (phone.workdir / "bench.sh").exists()
        assert not [n for n in _left_on(phone) if n.startswith("run-")]


def test_a_command_trial_on_an_emulated_phone_samples_with_the_native_sampler(adbd_sim, tmp_path):  # noqa: F811
    """The phone's ABI is read through the real client (adbd-sim's ``getprop ro.product.cpu.abi`` names this
    machine's, x86_64: its shells run host binaries), that build is pushed through adb sync under its digest, once
    for every trial, and it samples the phone's captured /sys as the sh loop would have."""
    from edgebench.launch.trial import run_trial

    native_sampler("x86_64")  # built here (or failing with its install line) before the trial looks for it
    phone = adbd_sim.phone("phone-tree", "--sys-tree", str(PHONE_TREE))
    target = _open(phone, "phone-tree")
    try:
        assert target.shell.run("getprop ro.product.cpu.abi").stdout.strip() == b"x86_64"
        runs = [_finishing(lambda: run_trial(_command_trial(_bench(tmp_path, 6)), target=target), "a trial")
                for _ in range(2)]  # fmt: skip
    finally:
        target.close()
    for run in runs:
        assert run.result.ok, run.result.reason
        assert run.result.sampler is not None and run.result.sampler.kind == "native", run.result.sampler
        assert run.result.sampler.why == "x86_64-linux-musl build for the device's x86_64"
        assert "cpu_freq" in run.result.sampler.sensors and "power_supply" in run.result.sampler.sensors
    assert len(list((phone.workdir / "native").glob("*/edgebench-sampler"))) == 1
    header, *rows = runs[0].samples_csv.strip().splitlines()
    freq = header.split(",").index("cpu0_freq_khz")
    assert {row.split(",")[freq] for row in rows} == {"1785600"}  # the tree's scaling_cur_freq, every record


def test_monitor_on_an_emulated_phone_streams_native_records_and_a_drop_leaves_nothing(adbd_sim, tmp_path):  # noqa: F811
    """``monitor --target`` on a phone without Python: the native sampler's records stream over adb and are written
    here as they arrive; a drop mid-way keeps the rows so far, says so, and leaves no sampler or folder on the phone."""
    import json
    import sys

    native_sampler("x86_64")
    phone = adbd_sim.phone("phone-tree", "--sys-tree", str(PHONE_TREE))
    args = [sys.executable, "-m", "edgebench", "monitor", "--target", f"adb://{phone.serial}", "--interval", "10ms"]
    out = tmp_path / "mon"
    done = subprocess.run([*args, "--out", str(out), "--duration", "1s"], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sampler"] == "native" and summary["stopped_by"] == "end of --duration", summary
    assert summary["samples"] >= 20 and summary["energy"]["device"]["avg_power_w"] == pytest.approx(1.986)
    _, *rows = (out / "freq_temperature.csv").read_text().splitlines()
    assert rows[0].split(",")[3:] == [*["1785600"] * 4, *["710400"] * 3, "825600"]  # the phone's clocks
    dropped = tmp_path / "dropped"
    proc = subprocess.Popen([*args, "--out", str(dropped), "--duration", "120s"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        samples = dropped / "samples.csv"
        while time.monotonic() < deadline and (not samples.exists() or samples.read_text().count("\n") < 20):
            time.sleep(0.2)  # rows are flushed every second
        phone.drop()
        proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, proc.stderr.read()
    summary = json.loads((dropped / "summary.json").read_text())
    assert summary["stopped_by"].startswith("the device's sampler ended before it was stopped"), summary
    assert summary["samples"] >= 20
    phone.wait_online()
    running = subprocess.run(["pgrep", "-f", str(phone.workdir / "native")], capture_output=True, text=True)
    assert not running.stdout.strip(), "the native sampler still runs on the phone"
    assert not list(phone.workdir.glob("monitor-*"))


def test_push_of_a_folder_twice_replaces_it(adbd_sim, tmp_path):  # noqa: F811
    from edgebench.launch.trial import run_trial

    folder = tmp_path / "kit"
    folder.mkdir()
    (folder / "bench.sh").write_text('i=0; while [ $i -lt 5 ]; do i=$((i+1)); echo "iter $i"; done\n')
    (folder / "stale.txt").write_text("old\n")
    phone = adbd_sim.phone("plain")
    target = _open(phone, "plain")
    trial = _command_trial(folder / "bench.sh", command="sh kit/bench.sh", push=(str(folder),))
    try:
        assert run_trial(trial, target=target).result.ok
        (folder / "stale.txt").unlink()
        assert run_trial(trial, target=target).result.ok
    finally:
        target.close()
    assert sorted(p.name for p in (phone.workdir / "kit").iterdir()) == ["bench.sh"]  # no kit/kit, no stale file


def test_old_phone_without_shell_protocol_and_4k_payload_runs_a_command_trial(adbd_sim, tmp_path):  # noqa: F811
    """Pre-Android-7 adbd: no exit codes, a pty, and a 4 KiB payload limit that a 9 KB command line would break
    (aborting the user's adb server)."""
    from edgebench.launch.trial import run_trial

    phone = adbd_sim.phone("old", "--no-shell-v2", "--max-payload", "4096")
    target = _open(phone, "old")
    try:
        run = _finishing(lambda: run_trial(_command_trial(_bench(tmp_path, 6)), target=target), "an old phone's trial")
    finally:
        target.close()
    assert run.result.ok, run.result.reason
    assert adbd_sim.phone("plain").adb("get-state").stdout.strip() == "device"  # the server still serves the rest


def test_drop_mid_frequency_trial_keeps_samples_and_restores_governors(adbd_sim, tmp_path):  # noqa: F811
    """The connection drops while a frequency is pinned: the trial is stored ``crashed`` with its samples so far,
    the governor is back (the device's watcher and the workstation both restore), nothing is left on the phone,
    and no traceback (Debian's client exits 0 with nothing on stderr on a drop)."""
    from edgebench.launch.session import Launcher

    native_sampler("x86_64")
    phone = adbd_sim.phone("pinned", "--rooted", "--sys-tree", str(PHONE_TREE))
    policy = phone.root_dir / "sys/devices/system/cpu/cpufreq/policy0"
    governor = (policy / "scaling_governor").read_text().strip()
    target = _open(phone, "pinned", root=True)
    trial = _command_trial(_bench(tmp_path, 200, 0.1), steps=150, cores=(1,), freq_khz=FREQ_KHZ)
    timer = _drop_once_sampling(phone)
    try:
        with Launcher(target, pins_frequency=True) as launcher:
            timer.start()
            launched = _finishing(lambda: launcher.launch(trial), "a trial whose connection dropped")
            assert (policy / "scaling_governor").read_text().strip() in ("userspace", governor)
    finally:
        timer.cancel()
        target.close()
    result = launched.finished.result
    assert result.status == "crashed"
    assert "ended mid-trial" in (result.reason or ""), result.reason
    assert launched.finished.samples_csv and len(launched.finished.samples_csv.splitlines()) > 2
    assert (policy / "scaling_governor").read_text().strip() == governor
    meta = launched.finished.sampler_meta  # a crashed trial's result has no sampler group; its samples say
    assert meta is not None and meta.kind == "native", meta
    phone.wait_online()
    assert _left_on(phone) == ["bench.sh", "native"], _left_on(phone)
    running = subprocess.run(["pgrep", "-f", str(phone.workdir / "native")], capture_output=True, text=True)
    assert not running.stdout.strip(), "the native sampler still runs on the phone"


def _drop_once_sampling(phone: Phone, records: int = 3, wait_s: float = 120) -> threading.Thread:
    """A thread (``start``, ``cancel``) that drops the phone once its running command trial has kept ``records``
    sample records: mid-trial however long the set-up took on a loaded machine (a fixed delay dropped it before
    anything was sampled there)."""
    stop = threading.Event()

    def sampled() -> int:  # a record is a "T <t>" line and a line per source read (sampler.sh's format)
        files = phone.workdir.glob("run-*/samples")
        return max((sum(line.startswith(b"T ") for line in p.read_bytes().splitlines()) for p in files), default=0)

    def watch() -> None:
        deadline = time.monotonic() + wait_s
        while not stop.is_set() and time.monotonic() < deadline:
            if sampled() >= records:
                phone.drop()
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.cancel = stop.set  # type: ignore[attr-defined]
    return thread


def test_agent_trial_dropped_mid_way_is_a_drop_not_an_exit_0(adbd_sim):  # noqa: F811
    """Debian's adb client exits 0 with an empty stderr when the device goes away: the missing end line of the
    session tells the drop, and the device-side watcher leaves no session folder."""
    from edgebench.launch.trial import run_trial

    phone = adbd_sim.phone("rooted", "--rooted")
    target = _open(phone, "rooted")
    trial = Trial(model="lenet", batch_size=4, steps=100_000, warmup=1, infer_steps=0, idle_s=0, timeout_s=120)
    timer = threading.Timer(8.0, phone.drop)
    timer.start()
    try:
        run = _finishing(lambda: run_trial(trial, target=target), "an agent trial whose connection dropped")
    finally:
        timer.cancel()
        target.close()
    assert run.result.status == "crashed"
    assert "connection lost mid-trial" in (run.result.reason or ""), run.result.reason
    phone.wait_online()
    assert not [n for n in _left_on(phone) if n.startswith("session-")]


THERMAL_DUMP = FIXTURES / "android" / "thermalservice_moderate.txt"


def test_a_phone_reporting_moderate_thermal_status_gets_a_throttling_warning(adbd_sim, tmp_path):  # noqa: F811
    """The phone's ``dumpsys thermalservice`` (the fixture is AOSP's dump format) is read before and after the
    trial through the real client; status 2 (moderate) is recorded and warned about wherever the trial shows."""
    import shutil

    from edgebench.launch.trial import run_trial
    from edgebench.report.summary import summary_table

    phone = adbd_sim.phone("hot")
    dumpsys = phone.root_dir / "system" / "bin" / "dumpsys"  # the phone's /system/bin, first on its shells' PATH
    dumpsys.write_text(
        f"#!{shutil.which('mksh')}\n"
        f"case \"$1\" in thermalservice) cat <<'DUMP'\n{THERMAL_DUMP.read_text()}DUMP\n"
        ';; *) echo "Can\'t find service: $1" ;; esac\n'
    )
    dumpsys.chmod(0o755)
    target = _open(phone, "hot")
    try:
        run = _finishing(lambda: run_trial(_command_trial(_bench(tmp_path, 6)), target=target), "a hot phone's trial")
    finally:
        target.close()
    assert run.result.ok, run.result.reason
    hygiene = run.result.hygiene
    assert hygiene is not None and (hygiene.thermal_status_start, hygiene.thermal_status_end) == (2, 2)
    assert "thermal status 2 (moderate)" in (hygiene.warning or ""), hygiene.warning
    assert "android_thermal_status_start" not in run.result.device.extra  # typed in hygiene, not repeated
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(summary_table(run.result))
    assert "thermal status 2 (moderate)" in console.export_text()


def test_a_phone_without_a_thermal_service_reports_no_status(adbd_sim, tmp_path):  # noqa: F811
    from edgebench.launch.trial import run_trial

    phone = adbd_sim.phone("plain")  # no dumpsys: an emulated phone without the service, as before Android 10
    target = _open(phone, "plain")
    try:
        assert target.thermal_status() is None
        run = _finishing(lambda: run_trial(_command_trial(_bench(tmp_path, 6)), target=target), "a plain trial")
    finally:
        target.close()
    assert run.result.ok and run.result.hygiene is not None
    assert run.result.hygiene.thermal_status_start is None and run.result.hygiene.thermal_status_end is None


def test_a_full_agent_trial_on_an_old_phone_ends_cleanly_without_the_shell_protocol(adbd_sim):  # noqa: F811
    """Pre-Android-7 adbd: the shell's stdin is a raw pty that cannot end and stderr is merged into stdout.  The
    agent's bundle is read up to the session's end line (which carries the exit status), then the client hangs up:
    the watcher sees the hang-up, finds the body done and only tidies up."""
    from edgebench.launch.trial import run_trial

    phone = adbd_sim.phone("oldroot", "--rooted", "--no-shell-v2", "--max-payload", "4096")
    target = _open(phone, "oldroot")
    try:
        assert target.shell.stdin_can_end() is False  # `adb features` of the phone lacks shell_v2
        trial = Trial(model="lenet", batch_size=4, steps=2, warmup=1, infer_steps=0, idle_s=0, timeout_s=120)
        run = _finishing(lambda: run_trial(trial, target=target), "the agent trial on an old phone")
    finally:
        target.close()
    assert run.result.ok, run.result.reason
    assert run.result.cold_start is not None and run.result.cold_start.first_step_ms
    assert not [n for n in _left_on(phone) if n.startswith("session-")]
    left = subprocess.run(["pgrep", "-f", str(phone.workdir / "session-")], capture_output=True, text=True)
    assert not left.stdout.strip(), "the session's watcher or agent still runs on the phone"
    assert adbd_sim.phone("rooted", "--rooted").adb("features").stdout.count("shell_v2") == 1  # a modern one has it


def test_a_frequency_trial_on_an_old_phone_releases_its_restore_watcher(adbd_sim, tmp_path):  # noqa: F811
    """Pre-Android-7 adbd: the restore watcher's stdin is a pty, which sees no end of file when edgebench closes its
    side, so the watcher waited for the connection to end and edgebench killed its client after 30 s.  The release
    line ends it at once: its client exits by itself, the governor is back, nothing is left on the phone."""
    from edgebench.launch.session import Launcher

    native_sampler("x86_64")
    phone = adbd_sim.phone("oldpinned", "--rooted", "--no-shell-v2", "--sys-tree", str(PHONE_TREE))
    policy = phone.root_dir / "sys/devices/system/cpu/cpufreq/policy0"
    governor = (policy / "scaling_governor").read_text().strip()
    target = _open(phone, "oldpinned", root=True)
    try:
        assert target.shell.stdin_can_end() is False
        trial = _command_trial(_bench(tmp_path, 6), cores=(1,), freq_khz=FREQ_KHZ)
        with Launcher(target, pins_frequency=True) as launcher:
            launched = _finishing(lambda: launcher.launch(trial), "a frequency trial on an old phone")
            assert (policy / "scaling_governor").read_text().strip() == "userspace"
        sysfs = target.sysfs()
    finally:
        target.close()
    assert launched.finished.result.ok, launched.finished.result.reason
    assert sysfs.holder_returncode is not None and sysfs.holder_returncode >= 0, sysfs.holder_returncode
    assert (policy / "scaling_governor").read_text().strip() == governor
    assert _left_on(phone) == ["bench.sh", "native"], _left_on(phone)
