"""Remote targets over a real OpenSSH server on 127.0.0.1 (started by the tests): edgebench's own trials run by the
far side's agent, the device's files read and written through the shell, a dropped connection mid-trial."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import threading
import time

import pytest

from edgebench.errors import UsageError
from edgebench.launch.trial import run_trial
from edgebench.records.trial import Trial
from edgebench.targets import open_target
from edgebench.targets.named import TargetConfig
from tests.native import native_sampler
from tests.paths import FIXTURES as TEST_FIXTURES
from tests.sshd import board, sshd  # noqa: F401  (the fixtures)

FIXTURES = TEST_FIXTURES / "sysfs"


def _tiny(**extra) -> Trial:
    return Trial(**{"model": "lenet", "batch_size": 4, "steps": 3, "warmup": 1, "infer_steps": 0, "idle_s": 0, **extra})


def test_unreachable_and_refused_are_one_line(sshd, tmp_path):  # noqa: F811
    with pytest.raises(UsageError, match="cannot reach"):
        open_target("ssh://127.0.0.1:1", named={})
    config = TargetConfig(name="b", **{**sshd.target_config(tmp_path), "ssh_options": ["IdentityFile=/dev/null"]})
    # the right key is still offered by the config file, so refuse through a user the server does not know
    refused = config.model_copy(update={"url": "ssh://nosuchuser@edgebench-test-board"})
    with pytest.raises(UsageError, match="refused the key"):
        open_target("b", named={"b": refused})


def _processes_mentioning(text: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if text in line and "ps -eo" not in line]


def _wait_for(predicate, timeout_s: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_dropped_connection_is_crashed_with_what_was_measured_and_leaves_nothing_running(sshd, board, tmp_path):  # noqa: F811
    target = board()
    work = tmp_path / "work"
    outcome = {}
    thread = threading.Thread(
        target=lambda: outcome.setdefault("run", run_trial(_tiny(steps=100000, max_time_s=600), target=target))
    )
    thread.start()

    def steps_on_device() -> int:
        return sum(len(p.read_text().splitlines()) for p in work.glob("session-*/tmp/edgebench-*/events.jsonl"))

    assert _wait_for(lambda: steps_on_device() >= 4, 60), "the trial never started stepping on the far side"
    assert sshd.drop_connections() >= 1
    thread.join(120)
    result = outcome["run"].result
    assert result.status == "crashed"
    assert "connection lost" in result.reason
    assert "after 0 measured steps" not in result.reason  # what was measured up to the drop came back
    assert outcome["run"].events
    # the device-side watcher killed the agent and its worker; the reconnect removed the session folder
    assert _wait_for(lambda: not _processes_mentioning(str(work)), 20), _processes_mentioning(str(work))
    assert not list(work.glob("session-*"))


def test_frequencies_set_through_the_shell_are_restored_on_the_device_when_the_connection_drops(sshd, board, tmp_path):  # noqa: F811
    from edgebench.host.frequency import FrequencyControl

    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rpi4", tree)
    target = board(sysfs_root=str(tree), root=True)
    assert target.is_root()
    policy = tree / "sys/devices/system/cpu/cpufreq/policy0"
    before = {f: (policy / f).read_text().strip() for f in ("scaling_governor", "scaling_max_freq", "scaling_min_freq")}
    control = FrequencyControl(target.sysfs(), is_root=target.is_root)
    control.__enter__()
    control.pin(None, 600000)
    assert (policy / "scaling_governor").read_text().strip() == "userspace"
    assert (policy / "scaling_setspeed").read_text().strip() == "600000"
    sshd.drop_connections()  # the workstation never gets to restore: the device does it itself
    restored = lambda: all((policy / f).read_text().strip() == v for f, v in before.items())  # noqa: E731
    assert _wait_for(restored, 20), {f: (policy / f).read_text() for f in before}
    # the script removes itself after its last write: a moment after the values are back
    assert _wait_for(lambda: not list((tmp_path / "work").glob("restore-*.sh")), 20)


def test_a_clean_restore_leaves_no_restore_script_behind(sshd, board, tmp_path):  # noqa: F811
    from edgebench.host.frequency import FrequencyControl

    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rpi4", tree)
    target = board(sysfs_root=str(tree), root=True)
    policy = tree / "sys/devices/system/cpu/cpufreq/policy0"
    governor = (policy / "scaling_governor").read_text().strip()
    with FrequencyControl(target.sysfs(), is_root=target.is_root) as control:
        control.pin(None, 600000)
        assert list((tmp_path / "work").glob("restore-*.sh"))
    assert (policy / "scaling_governor").read_text().strip() == governor
    assert not list((tmp_path / "work").glob("restore-*.sh"))


def _command_trial(**extra) -> Trial:
    script = 'i=0; while [ $i -lt 6 ]; do i=$((i+1)); echo "step $i loss 0.$i"; done'
    fields = {"model": "loop", "command": script, "step_pattern": r"^step (?P<n>\d+) loss (?P<loss>[\d.]+)$",
              "steps": 4, "warmup": 1, "idle_s": 0, "sample_interval_ms": 50.0}  # fmt: skip
    return Trial(**{**fields, **extra})


def test_command_trial_runs_over_ssh_with_the_native_sampler(board, tmp_path):  # noqa: F811
    native_sampler("x86_64")  # built here (or failing with its install line) before the trial looks for it
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rpi4", tree)
    target = board(sysfs_root=str(tree))
    run = run_trial(_command_trial(), target=target)
    assert run.result.ok, run.result.reason
    assert run.result.target == "board"
    assert run.result.trial.steps == 4
    assert run.samples_csv is not None and run.sampler_meta is not None
    # the far side is this x86-64 machine: its build was copied (by `cat`, then made executable) and sampled
    assert run.result.sampler is not None and run.result.sampler.kind == "native", run.result.sampler
    assert run.result.sampler.why == "x86_64-linux-musl build for the device's x86_64"
    assert len(list((tmp_path / "work" / "native").glob("*/edgebench-sampler"))) == 1
    cold = run.result.cold_start  # the command's start to its first step line, said to include the tool's start
    assert cold is not None and cold.first_step_counted_as == "command" and cold.first_step_ms is not None
    assert cold.model_load_s is None and cold.notes


def test_an_agent_trial_over_ssh_records_its_cold_start(board):  # noqa: F811
    """The far side's fresh worker times the model's load and the first step, as a local trial does."""
    run = run_trial(_tiny(), target=board())
    assert run.result.ok, run.result.reason
    cold = run.result.cold_start
    assert cold is not None and cold.model_load_what and cold.model_load_what.startswith("torch: the task built")
    assert cold.model_load_s and cold.model_load_peak_memory_bytes and cold.first_step_ms
    assert cold.first_step_counted_as == "warmup"


def test_a_device_lacking_a_needed_command_is_one_line_naming_it(board):  # noqa: F811
    with pytest.raises(UsageError, match="board lacks cat, mkdir, rm, mv"):
        board(env={"PATH": "/nonexistent"})


def test_command_trial_dropped_over_ssh_keeps_its_samples_and_leaves_no_run_folder(sshd, board, tmp_path):  # noqa: F811
    """The adb rules over SSH too: a drop is told by the missing exit line, the samples so far are fetched over a
    new connection, and the run's folder and script are gone from the device."""
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rpi4", tree)
    target = board(sysfs_root=str(tree))
    work = tmp_path / "work"
    script = 'i=0; while [ $i -lt 400 ]; do i=$((i+1)); sleep 0.05; echo "step $i loss 0.5"; done'
    outcome = {}
    trial = _command_trial(command=script, steps=300)
    thread = threading.Thread(target=lambda: outcome.setdefault("run", run_trial(trial, target=target)))
    thread.start()
    assert _wait_for(lambda: any(work.glob("run-*/samples")), 60), "the sampler never started on the far side"
    assert _wait_for(lambda: any(p.stat().st_size > 2000 for p in work.glob("run-*/samples")), 60)
    assert sshd.drop_connections() >= 1
    thread.join(120)
    run = outcome["run"]
    assert run.result.status == "crashed"
    assert "ended mid-trial" in run.result.reason
    assert run.samples_csv is not None and len(run.samples_csv.splitlines()) > 2
    assert not [p.name for p in work.glob("run-*")]


def test_a_session_whose_stdin_cannot_end_is_hung_up_after_its_end_line():
    """An old phone's shell (no shell protocol) never sees its stdin end: once the end line is read the client is
    stopped (SIGTERM), not waited for 30 s and killed; a shell that can see it is left to end by itself."""
    from edgebench.targets.guard import ENDED_LINE
    from edgebench.targets.remote import _exchange

    script = f'read -r line; echo "got $line"; echo {ENDED_LINE} 0; exec sleep 600'
    proc = subprocess.Popen(["sh", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, _, status = _exchange(proc, "payload\n", 60, stdin_can_end=False)
    assert (stdout.strip(), status) == ("got payload", 0)
    assert proc.returncode == -15  # terminated at once, not killed (-9) after the 30 s wait
    ends = subprocess.Popen(["sh", "-c", f"read -r line; echo {ENDED_LINE} 0; cat > /dev/null"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert _exchange(ends, "x\n", 60)[2] == 0 and ends.returncode == 0  # stdin closed: it ended by itself


def test_a_model_file_is_copied_to_the_device_and_run_there(board, tmp_path):  # noqa: F811
    """``--model m.onnx --target ssh://...``: the file travels to the target's work folder (once per digest) and the
    device's agent runs that copy; the trial keeps this machine's path and digest."""
    from edgebench.backends import model_file as mf
    from edgebench.config.trial import make_trial
    from tests.conftest import require_onnxruntime

    require_onnxruntime()
    here = tmp_path / "mine"
    here.mkdir()
    model = here / "two_inputs.onnx"
    shutil.copy(TEST_FIXTURES / "models" / "two_inputs.onnx", model)
    trial = make_trial(model=str(model), batch_size=2, steps=2, warmup=1, idle_s=0)
    target = board()
    run = run_trial(trial, target=target)
    assert run.result.ok, run.result.reason
    assert run.result.trial.model_file == str(model) and run.result.trial.model_sha256 == mf.file_digest(model)
    on_device = pathlib.Path(run.run.env["model_file_on_device"])
    assert on_device.parent.parent == tmp_path / "work" / "models" and on_device.read_bytes() == model.read_bytes()
    stamp = on_device.stat().st_mtime_ns
    assert run_trial(trial, target=target).result.ok and on_device.stat().st_mtime_ns == stamp  # not sent again
    model.write_bytes(model.read_bytes() + b"\x00")  # changed since the trial was made: refused, not run stale
    stale = run_trial(trial, target=target).result
    assert stale.status == "crashed" and "changed since the trial was made" in (stale.reason or "")


def test_a_language_model_fine_tunes_on_the_user_s_text_file_on_the_device(board, tmp_path):  # noqa: F811
    """``--model lm_1m --data notes.txt --finetune lora --target ssh://...``: the text travels like a model file and
    the device's agent fine-tunes on it, timing generation too."""
    from edgebench.config.trial import make_trial

    notes = tmp_path / "notes.txt"
    notes.write_text("the device learns from its own notes, byte by byte. " * 60)
    trial = make_trial(model="lm_1m", data=str(notes), finetune="lora", batch_size=2, input_shape=(16,), steps=2,
                       warmup=1, infer_steps=0, idle_s=0, contexts=(8,), decode_tokens=3, generations=1)  # fmt: skip
    run = run_trial(trial, target=board())
    assert run.result.ok, run.result.reason
    lm = run.result.language_model
    assert lm is not None and lm.setup.text.name == "notes.txt" and lm.setup.lora_layers == 28
    assert lm.held_out and lm.generation and lm.generation[0].kv_cache_bytes == 2048 * 11
    on_device = pathlib.Path(run.run.env["data_on_device"])
    assert on_device.parent.parent == tmp_path / "work" / "data" and on_device.read_bytes() == notes.read_bytes()
    assert run.result.trial.data == str(notes)  # the trial keeps this machine's path
