"""Records stored by an earlier edgebench (result schema 3) load and render as they did then.  The end-to-end half:
what runs the real command, a real worker or another process; the rest is in tests/unit/store/test_golden_store.py.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.factories import copy_of_the_golden_store
from tests.paths import GOLDEN_STORE_DIR as GOLDEN
from tests.paths import GOLDEN_TRACED as TRACED


@pytest.fixture(scope="module")
def store_copy(tmp_path_factory) -> Path:
    return copy_of_the_golden_store(tmp_path_factory.mktemp("golden"))


@pytest.fixture
def edgebench(cli, store_copy):
    """What ``edgebench ARGS`` printed on the golden store, at the 100 columns the golden files were written at."""

    def run(*args: str) -> str:
        proc = cli(*args, store=store_copy, env={"COLUMNS": "100"})
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    return run


def test_layers_of_a_stored_trace_render_as_they_did(edgebench):
    # Regenerated once, deliberately (issue 37): a layer's CPU is the worker's own CPU time over its cores (48% of
    # two cores for one busy thread), no longer the cores' total with other processes' load (100%).
    for suffix, extra in ((".txt", ()), (".json", ("--json",))):
        out = edgebench("layers", TRACED, "--no-measure", *extra)
        assert out == (GOLDEN / f"layers-{TRACED}{suffix}").read_text()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_compare_and_exports_of_stored_records_are_unchanged(edgebench, tmp_path):
    # compare.txt regenerated once, deliberately (issue 37): two trials, one process each, get ratios and no test,
    # the step median first, and the settings they differ in.
    assert edgebench("compare", "20261123-174043", "20261123-174053") == (GOLDEN / "compare.txt").read_text()
    edgebench("export", "--format", "csv", "--out", str(tmp_path / "trials.csv"))
    edgebench("export", "--format", "csv", "--table", "steps", "--out", str(tmp_path / "steps.csv"))
    then, now = _rows(GOLDEN / "trials.csv"), _rows(tmp_path / "trials.csv")
    assert [{k: row[k] for k in then[0]} for row in now] == then  # every cell of then, as it was
    # fields added since: not measured, or the default every old trial had (it trained, here)
    added_defaults = {"mode": "train", "target": "local"}
    assert all(row[k] == added_defaults.get(k, "") for row in now for k in row.keys() - then[0].keys())
    assert (tmp_path / "steps.csv").read_text() == (GOLDEN / "steps.csv").read_text()
    edgebench("export", "--format", "mnn-suite", "--device", "GOLDEN", "--out", str(tmp_path / "mnn"))
    # mnn/ was regenerated once, deliberately, when the export took the suite's meanings and files (issue 16).
    # Its folder was renamed once, deliberately, from GOLDEN_Core_3/ to GOLDEN/ (issue 27, the unrooted layout):
    # these trials were given no --cores (they ran on all the allowed cores, 0-1), and the suite writes
    # <Device>_Core_<mask>/ only where it applied a mask with taskset; every file's contents stayed the same.
    # Its train_bench/*.result files took one line more, deliberately (issue 37): 'edgebench batches: N', the
    # batches a run trained (warm-up included) beside measureIteration, the steps measured, so a re-import computes
    # energy per batch from the right count.
    expected = sorted(p.relative_to(GOLDEN / "mnn") for p in (GOLDEN / "mnn").rglob("*") if p.is_file())
    assert sorted(p.relative_to(tmp_path / "mnn") for p in (tmp_path / "mnn").rglob("*") if p.is_file()) == expected
    for rel in expected:
        assert (tmp_path / "mnn" / rel).read_text() == (GOLDEN / "mnn" / rel).read_text(), rel
