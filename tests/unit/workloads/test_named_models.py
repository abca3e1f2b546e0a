"""Data never becomes code (issue 39): a stored trial whose model is ``module:attr`` makes no read-only command
import that module; they show the name, and one that needs the model says to name it."""

from __future__ import annotations

import shutil
import sys

import pytest

from edgebench.cli import main
from tests.factories import refused, relabel_models
from tests.paths import GOLDEN_STORE, GOLDEN_TRACED

EVIL = "evilmod:build"


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """A copy of the golden store whose LeNet trials name ``evilmod:build``, and ``evilmod.py`` in the current folder
    (the probe ran ``./evilmod.py``): importing it leaves a mark."""
    store = tmp_path / "store.sqlite"
    shutil.copy(GOLDEN_STORE, store)
    relabel_models(store, "lenet", EVIL)
    (tmp_path / "evilmod.py").write_text("import pathlib\npathlib.Path(__file__).with_name('IMPORTED').touch()\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EDGEBENCH_STORE", str(store))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("evilmod", None)
    assert not (tmp_path / "IMPORTED").exists(), "a read-only command imported the stored module:attr"


def test_partition_of_the_trial_refuses_in_one_line(hostile, capsys):
    line = refused(capsys, "partition", "--trial", GOLDEN_TRACED)
    assert EVIL in line and f"--model {EVIL}" in line


PREDICT = ("predict", "--model", "lenet", "--batch-size", "8")


@pytest.mark.parametrize("argv", [PREDICT, ("predict", "--validate")], ids=["predict", "validate"])
def test_predict_learns_without_importing_it(hostile, capsys, argv):
    assert main(list(argv)) == 0
    assert EVIL in capsys.readouterr().out  # shown by name


def test_browsing_shows_the_name(hostile, capsys):
    assert main(["trials"]) == 0 and main(["show", GOLDEN_TRACED]) == 0
    assert EVIL in capsys.readouterr().out
