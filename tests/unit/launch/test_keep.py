"""A measured trial is stored (or rescued) before anything prints it (issue 39, lost work): the summary's
OverflowError with a 400-digit ``--memory-budget`` lost the trial, which was printed before it was kept."""

from __future__ import annotations

import pytest

from edgebench.launch.session import Launcher
from edgebench.store import Store
from edgebench.store.rescue import NotStored
from edgebench.targets.local import LocalTarget
from tests.factories import finished, refused


def test_the_trial_is_stored_before_the_printing_that_fails(tmp_path):
    def show():
        raise OverflowError("int too large to convert to float")

    with Store(tmp_path / "s.sqlite") as db:
        with Launcher(LocalTarget(), store=db) as launcher, pytest.raises(OverflowError):
            launcher.keep(finished(), then=show)
        assert db.trial_ids("") == [finished().trial_id]


def test_a_store_that_fails_still_lets_the_figures_print(tmp_path, monkeypatch):
    shown = []
    with Store(tmp_path / "s.sqlite") as db:
        monkeypatch.setattr(db, "_insert", lambda *a: (_ for _ in ()).throw(OSError(28, "No space left on device")))
        with Launcher(LocalTarget(), store=db) as launcher, pytest.raises(NotStored) as info:
            launcher.keep(finished(), then=lambda: shown.append(1))
    assert shown == [1] and info.value.kept_in.is_file()  # rescued, and printed


@pytest.mark.parametrize("flag", ["--memory-budget", "--batch-size", "--steps", "--interval", "--timeout", "--seed"])
def test_a_400_digit_number_is_refused_at_the_flag(capsys, flag):
    line = refused(capsys, "run", "--no-store", "--backend", "fake", flag, "9" * 400)
    assert flag in line and len(line) < 200


def test_a_run_refused_before_its_trial_leaves_no_store(tmp_path, capsys):
    """Refused after the store was opened (a frequency this device cannot set): the store it made goes again."""
    (tmp_path / "tree" / "proc").mkdir(parents=True)  # a device with no cpufreq
    store = tmp_path / "new.sqlite"
    line = refused(capsys, "run", "--backend", "fake", "--frequency", "1GHz", "--sysfs-root", str(tmp_path / "tree"),
                   "--store", str(store))  # fmt: skip
    assert "no cpufreq policies" in line and not any(tmp_path.glob("new.sqlite*"))


def test_a_rescue_file_is_named_inside_its_folder(tmp_path):
    from edgebench.store.rescue import keep_unsaved

    kept = keep_unsaved(finished("../../escaped"), tmp_path / "s.sqlite")
    assert kept.parent == tmp_path.resolve() and "/" not in kept.name
