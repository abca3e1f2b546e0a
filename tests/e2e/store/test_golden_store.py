"""Records stored by an earlier edgebench (result schema 3) load and render as they did then.  The end-to-end half:
what runs the real command, a real worker or another process; the rest is in tests/unit/store/test_golden_store.py.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.store.test_golden_store import GOLDEN, TRACED, copy_of_the_golden_store


@pytest.fixture(scope="module")
def store_copy(tmp_path_factory) -> Path:
    return copy_of_the_golden_store(tmp_path_factory.mktemp("golden"))


def edgebench(store: Path, *args: str) -> str:
    env = dict(os.environ, EDGEBENCH_STORE=str(store), COLUMNS="100")
    proc = subprocess.run([sys.executable, "-m", "edgebench", *args], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_layers_of_a_stored_trace_render_as_they_did(store_copy):
    for suffix, extra in ((".txt", ()), (".json", ("--json",))):
        out = edgebench(store_copy, "layers", TRACED, "--no-measure", *extra)
        assert out == (GOLDEN / f"layers-{TRACED}{suffix}").read_text()


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_compare_and_exports_of_stored_records_are_unchanged(store_copy, tmp_path):
    assert (
        edgebench(store_copy, "compare", "20261123-174043", "20261123-174053") == (GOLDEN / "compare.txt").read_text()
    )
    edgebench(store_copy, "export", "--format", "csv", "--out", str(tmp_path / "trials.csv"))
    edgebench(store_copy, "export", "--format", "csv", "--table", "steps", "--out", str(tmp_path / "steps.csv"))
    then, now = _rows(GOLDEN / "trials.csv"), _rows(tmp_path / "trials.csv")
    assert [{k: row[k] for k in then[0]} for row in now] == then  # every cell of then, as it was
    # fields added since: not measured, or the default every old trial had (it trained, here)
    added_defaults = {"mode": "train", "target": "local"}
    assert all(row[k] == added_defaults.get(k, "") for row in now for k in row.keys() - then[0].keys())
    assert (tmp_path / "steps.csv").read_text() == (GOLDEN / "steps.csv").read_text()
    edgebench(store_copy, "export", "--format", "mnn-suite", "--device", "GOLDEN", "--out", str(tmp_path / "mnn"))
    # mnn/ was regenerated once, deliberately, when the export took the suite's meanings and files (issue 16)
    expected = sorted(p.relative_to(GOLDEN / "mnn") for p in (GOLDEN / "mnn").rglob("*") if p.is_file())
    assert sorted(p.relative_to(tmp_path / "mnn") for p in (tmp_path / "mnn").rglob("*") if p.is_file()) == expected
    for rel in expected:
        assert (tmp_path / "mnn" / rel).read_text() == (GOLDEN / "mnn" / rel).read_text(), rel
