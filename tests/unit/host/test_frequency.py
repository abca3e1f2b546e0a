"""cpufreq control on writable copies of fixture trees: pinning, refusal, and restoring on every way out."""

import os
import shutil

import pytest

from edgebench.errors import UsageError
from edgebench.host.cpu import freq_policies
from edgebench.host.frequency import FrequencyControl, frequencies_for, nearest_khz
from edgebench.host.sysfs import SysFS

POLICIES = "sys/devices/system/cpu/cpufreq"


@pytest.fixture
def phone(tmp_path, sysfs_tree):
    """A writable copy of a three-cluster Snapdragon 855 tree (Meizu 16T, the MNN suite's phone)."""
    root = tmp_path / "sm8150"
    shutil.copytree(sysfs_tree("sm8150_meizu16t"), root)
    return root


@pytest.fixture
def pi(tmp_path, sysfs_tree):
    root = tmp_path / "rpi4"
    shutil.copytree(sysfs_tree("rpi4"), root)
    return root


CONTROLS = ("scaling_governor", "scaling_min_freq", "scaling_max_freq")


def snapshot(root):
    """Governor and limits of every policy (``scaling_setspeed`` reads ``<unsupported>`` outside userspace)."""
    return {p: p.read_text().strip() for name in CONTROLS for p in sorted((root / POLICIES).glob(f"*/{name}"))}


def read(root, policy, name):
    return (root / POLICIES / policy / name).read_text().strip()


def test_all_means_every_frequency_of_the_policies_clocking_the_cores(phone):
    sysfs = SysFS(phone)
    little = frequencies_for(sysfs, (0, 1, 2, 3))
    assert little[0] == 300_000 and little[-1] == 1_785_600 and len(little) == 18
    big = frequencies_for(sysfs, (4, 5, 6, 7))  # mask f0 spans the gold cluster and the prime core
    assert big[0] == 710_400 and big[-1] == 2_841_600
    assert set(frequencies_for(sysfs, None)) >= set(little) | set(big)


def test_userspace_governor_and_setspeed_on_every_policy_of_the_mask(phone):
    before = snapshot(phone)
    with FrequencyControl(SysFS(phone), is_root=lambda: True) as control:
        applied = control.pin((4, 5, 6, 7), 1_708_800)
        assert applied == {"policy4": 1_708_800, "policy7": 1_708_800}
        for policy in ("policy4", "policy7"):
            assert read(phone, policy, "scaling_governor") == "userspace"
            assert read(phone, policy, "scaling_setspeed") == "1708800"
        assert read(phone, "policy0", "scaling_governor") == "schedutil"  # not a core of the mask
        # a frequency a policy does not offer: the nearest one it offers (1785600 is 35.6 MHz away, 1708800 41.2)
        assert control.pin((0,), 1_750_000) == {"policy0": 1_785_600}
        assert read(phone, "policy4", "scaling_governor") == "schedutil"  # released when the next trial moved on
    assert snapshot(phone) == before


def test_min_max_limits_where_the_userspace_governor_is_missing(pi):
    governors = pi / POLICIES / "policy0" / "scaling_available_governors"
    governors.write_text("conservative ondemand powersave performance schedutil\n")
    before = snapshot(pi)
    with FrequencyControl(SysFS(pi), is_root=lambda: True) as control:
        assert control.pin(None, 800_000) == {"policy0": 800_000}
        assert read(pi, "policy0", "scaling_min_freq") == read(pi, "policy0", "scaling_max_freq") == "800000"
        assert read(pi, "policy0", "scaling_governor") == "ondemand"
        control.pin(None, 1_400_000)  # raising the floor above the current ceiling: the ceiling goes first
        assert read(pi, "policy0", "scaling_min_freq") == "1400000"
    assert snapshot(pi) == before


def test_nearest_frequency_clamps_below_the_lowest(sysfs_tree):
    (policy,) = freq_policies(SysFS(sysfs_tree("rpi4")))
    assert nearest_khz(policy, 100_000) == 600_000
    assert nearest_khz(policy, 1_450_000) == 1_400_000  # a tie: the lower
    assert nearest_khz(policy, 1_460_000) == 1_500_000
    assert nearest_khz(policy, 9_000_000) == 1_500_000


def test_1_7ghz_on_the_meizu_is_the_tables_1708_8_mhz_not_the_1632_a_round_down_gave(phone):
    """The MNN-based suite's folder for its 1.7 GHz runs is MEIZU_Freq_1708800; rounding down applied 1632 MHz."""
    policies = {p.name: p for p in freq_policies(SysFS(phone))}
    assert nearest_khz(policies["policy0"], 1_700_000) == 1_708_800
    assert nearest_khz(policies["policy4"], 1_700_000) == 1_708_800
    assert nearest_khz(policies["policy7"], 1_700_000) == 1_708_800


def test_refused_when_not_root(phone):
    with pytest.raises(UsageError) as err, FrequencyControl(SysFS(phone), is_root=lambda: False):
        pass
    assert err.value.field == "frequencies" and "needs root" in err.value.message and "sudo" in err.value.message


def test_refused_without_cpufreq(tmp_path):
    with pytest.raises(UsageError, match="no cpufreq policies"), FrequencyControl(SysFS(tmp_path)):
        pass


def test_refused_when_a_control_file_cannot_be_written(phone):
    (phone / POLICIES / "policy7" / "scaling_min_freq").unlink()  # a vendor kernel without it
    with pytest.raises(UsageError, match="policy7/scaling_min_freq is missing or not writable"):
        FrequencyControl(SysFS(phone), is_root=lambda: True).check()


def test_restored_when_an_exception_escapes(phone):
    before = snapshot(phone)
    with pytest.raises(RuntimeError, match="boom"), FrequencyControl(SysFS(phone), is_root=lambda: True) as control:
        control.pin((0, 1, 2, 3, 4, 5, 6, 7), 940_800)
        assert snapshot(phone) != before
        raise RuntimeError("boom")
    assert snapshot(phone) == before


def test_restored_on_keyboard_interrupt(phone):
    before = snapshot(phone)
    with pytest.raises(KeyboardInterrupt), FrequencyControl(SysFS(phone), is_root=lambda: True) as control:
        control.pin((7,), 2_841_600)
        raise KeyboardInterrupt
    assert snapshot(phone) == before


def test_journal_restores_what_a_killed_run_left_behind(phone, tmp_path):
    before = snapshot(phone)
    journal = tmp_path / "store.cpufreq-restore.json"
    control = FrequencyControl(SysFS(phone), is_root=lambda: True, journal=journal)
    control.__enter__()
    control.pin((0,), 300_000)
    assert journal.exists()  # the process dies here (SIGKILL): no __exit__ runs
    notes = []
    with FrequencyControl(SysFS(phone), is_root=lambda: True, journal=journal, notify=notes.append):
        assert snapshot(phone) == before  # the next run put it back before anything else
    assert notes and "restored" in notes[0]
    assert not journal.exists()


def test_a_userspace_governor_gets_its_own_speed_back(pi):
    (pi / POLICIES / "policy0" / "scaling_governor").write_text("userspace\n")
    (pi / POLICIES / "policy0" / "scaling_setspeed").write_text("800000\n")
    with FrequencyControl(SysFS(pi), is_root=lambda: True) as control:
        control.pin(None, 1_500_000)
        assert read(pi, "policy0", "scaling_setspeed") == "1500000"
    assert read(pi, "policy0", "scaling_governor") == "userspace"
    assert read(pi, "policy0", "scaling_setspeed") == "800000"


def test_a_trial_records_the_frequency_asked_and_the_one_each_policy_got(phone):
    """Seen: `run --frequency 1.7GHz` stored 1,700,000 kHz while the policy was set to the nearest it offers."""
    from edgebench.launch.session import Launcher
    from edgebench.measure.trial import failed_result
    from edgebench.records.finished import FinishedTrial
    from edgebench.records.trial import Trial
    from edgebench.report.summary import freq_set_text
    from edgebench.targets.local import LocalTarget

    def runner(trial, *, target, sample=True, context=None):  # the context is recorded as measuring records it
        return FinishedTrial(result=failed_result(trial, "t1", "error", "not run", [], {}, context))

    trial = Trial(cores=(0,), freq_khz=1_700_000)
    with Launcher(LocalTarget(phone), pins_frequency=True, is_root=lambda: True, runner=runner) as launcher:
        result = launcher.launch(trial).finished.result
    assert result.trial.freq_khz == 1_700_000  # asked
    assert result.cpu.freq_applied_khz == {"policy0": 1_708_800}  # the nearest the little cluster offers
    assert freq_set_text(result) == "applied policy0 1708.8 MHz (asked 1700 MHz)"
    assert result.applied_freq_khz == 1_708_800


# Issue 39, lost or half-done work: `run --frequency` keeps a journal like sweeps do, the next edgebench command
# restores a stale one and says so, and what a journal holds is checked before it is written to cpufreq.


def _killed(root):
    """A pinning left as SIGKILL leaves it: the block entered, a policy pinned, never exited; its journal."""
    control = FrequencyControl(SysFS(root), is_root=lambda: True)
    control.__enter__()
    control.pin((0,), 300_000)
    assert control.journal is not None and control.journal.exists()
    return control.journal


def _gone_pid():
    import subprocess

    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_run_frequency_journals_by_default_and_the_next_command_restores_it(phone, capsys):
    import json

    from edgebench.cli import main

    before = snapshot(phone)
    journal = _killed(phone)
    record = json.loads(journal.read_text())
    record["pid"], record["started"] = _gone_pid(), None  # its process is gone now
    journal.write_text(json.dumps(record))
    assert main(["models", "--no-measure", "--json"]) == 0  # any command
    assert snapshot(phone) == before and not journal.exists()
    assert "restored the cpufreq settings of" in capsys.readouterr().err


def test_a_journal_of_a_run_still_going_refuses_a_second_pinning(phone):
    import json

    journal = _killed(phone)
    record = json.loads(journal.read_text())
    record["pid"], record["started"] = os.getppid(), None  # a live process other than this one
    journal.write_text(json.dumps(record))
    with pytest.raises(UsageError, match=r"another edgebench .* holds this device's CPU frequencies"):
        FrequencyControl(SysFS(phone), is_root=lambda: True).__enter__()
    journal.unlink()


@pytest.mark.parametrize(
    "junk",
    ["not json", "[]", '{"sysfs_root": 3}', '{"sysfs_root": "ROOT", "policies": [{"path": "/etc/passwd"}]}',
     '{"sysfs_root": "ROOT", "policies": [{"path": "PATH", "governor": "rm -rf", "min_khz": null, "max_khz": null,'
     ' "setspeed_khz": null}]}',
     '{"sysfs_root": "ROOT", "policies": [{"path": "PATH", "governor": null, "min_khz": 1, "max_khz": 1e400,'
     ' "setspeed_khz": null}]}', "[" * 100_000],
)  # fmt: skip
def test_a_damaged_journal_is_set_aside_with_a_note_and_nothing_is_written(phone, junk):
    from edgebench.host.frequency import default_journal, policy_dir

    before = snapshot(phone)
    journal = default_journal(SysFS(phone))
    path = policy_dir(SysFS(phone), freq_policies(SysFS(phone))[0])
    journal.write_text(junk.replace("ROOT", str(phone)).replace("PATH", path))
    notes = []
    with FrequencyControl(SysFS(phone), is_root=lambda: True, notify=notes.append):
        assert snapshot(phone) == before
    assert len(notes) == 1 and "journal" in notes[0] and not journal.exists()


def test_stale_journals_that_are_junk_are_removed_with_a_note(tmp_path):
    from edgebench.host.frequency import restore_stale_journals

    (tmp_path / f"edgebench-cpufreq-{os.getuid()}-x.json").write_text("\x00\x01")
    notes = []
    restore_stale_journals(notes.append, tmp_path)
    assert notes and "damaged" in notes[0] and not list(tmp_path.iterdir())
