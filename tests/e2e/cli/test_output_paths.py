"""Output paths are checked before the work starts, in one line naming the flag, and never leave a temporary file."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgebench.store import Store
from tests import factories


@pytest.fixture
def store(cli):
    with Store(cli.store_path) as db:
        db.save(factories.result("20260101-000000-aaaaaaaa", [10.0, 11.0]), {"events": ""})
    return cli.store_path


def one_line(proc, expected: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"edgebench: error: {expected}"


def cannot_write_in_proc(proc) -> None:
    """The line for ``/proc``, which refuses new files to root too (the reason differs by user)."""
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert line.startswith("edgebench: error: --out: cannot write in /proc (") and line.endswith("; give another path")
    assert "\n" not in line


def leftovers(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.iterdir() if p.name.endswith(".tmp") or "probe" in p.name]


def test_trace_into_a_folder_is_refused_and_leaves_nothing(cli, store, tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    one_line(
        cli("trace", "20260101", "-o", str(folder)),
        f"--output: {folder} is a folder; give a file name, e.g. --output {folder / '20260101.trace.json'}",
    )
    assert list(folder.iterdir()) == [] and leftovers(tmp_path) == []


def test_export_paths_that_cannot_take_the_output(cli, store, tmp_path):
    a_file = tmp_path / "results.csv"
    a_file.write_text("mine\n")
    one_line(
        cli("export", "--format", "mnn-suite", "--device", "VM", "--out", str(a_file)),
        f"--out: {a_file} is a file; give a folder",
    )
    one_line(
        cli("export", "--format", "mnn-suite", "--device", "VM"),
        "--out: give the folder for the suite's files, e.g. --out mnn-results",
    )
    for name in ("x.csv", "x.parquet"):
        fmt = name.split(".")[1]
        cannot_write_in_proc(cli("export", "--format", fmt, "--out", f"/proc/{name}"))
    one_line(
        cli("export", "--out", str(tmp_path / "missing" / "x.csv")),
        f"--out: folder {tmp_path / 'missing'} does not exist; create it or give another path",
    )
    assert a_file.read_text() == "mine\n" and leftovers(tmp_path) == []


def test_export_writes_whole_files_with_ordinary_permissions(cli, store, tmp_path):
    out = tmp_path / "trials.csv"
    proc = cli("export", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().startswith("trial_id,") and leftovers(tmp_path) == []
    assert out.stat().st_mode & 0o644 == 0o644
    proc = cli("export", "--format", "mnn-suite", "--device", "VM", "--out", str(tmp_path / "suite"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().endswith(f"files under {tmp_path / 'suite'}")


def test_monitor_into_a_place_nobody_may_write_is_refused_before_sampling(cli, tmp_path):
    cannot_write_in_proc(cli("monitor", "--out", "/proc/edgebench-monitor", "--duration", "1s"))
    assert not Path("/proc/edgebench-monitor").exists()
