"""A store that cannot keep a trial is refused before the trial runs, in one line; a trial measured before the
store failed is printed and kept in a file the line names, and ``edgebench import`` stores it later."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from edgebench.store import Store
from edgebench.store.sqlite import SCHEMA_VERSION
from tests import factories
from tests.paths import GOLDEN_STORE

#: Every command that opens the store, with the arguments that get it that far (the store is refused first).
COMMANDS = {
    "run": ["run", "--steps", "1", "--warmup", "0", "--infer-steps", "0"],
    "sweep": ["sweep", "--set", "batch_sizes=[1]", "--set", "steps=1"],
    "export": ["export"],
    "compare": ["compare", "20260101", "20260102"],
    "layers": ["layers", "20260101"],
    "feasibility": ["feasibility", "--model", "lenet", "--memory-budget", "1GiB", "--batch-sizes", "1"],
    "study": ["study", "mnn-suite", "--quick"],
}


def one_store_line(proc: subprocess.CompletedProcess[str], words: str) -> None:
    """Exit 2 and a single line naming ``--store`` and what is wrong, no traceback."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("edgebench: error: --store: "), proc.stderr
    assert words in lines[0], lines[0]


def stored_store(path: Path) -> Path:
    """A real store holding one trial."""
    with Store(path) as store:
        store.save(factories.result("20260101-000000-aaaaaaaa", [10.0, 11.0]), {"events": ""})
    return path


def damaged(path: Path) -> Path:
    """A store with its header intact and every later page overwritten, as a torn write or a bad disk leaves it."""
    stored_store(path)
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    data[page_size:] = b"\xab" * (len(data) - page_size)
    path.write_bytes(bytes(data))
    return path


def not_a_database(path: Path) -> Path:
    path.write_text("these are my notes, not a store\n" * 200)
    return path


def newer(path: Path) -> Path:
    stored_store(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 999")
    db.close()
    return path


def folder(path: Path) -> Path:
    path.mkdir()
    return path


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (folder, "is a folder, not a store file"),
        (not_a_database, "is not an edgebench store"),
        (newer, f"newer edgebench (schema 999, this one knows up to {SCHEMA_VERSION})"),
        (damaged, "is damaged"),
    ],
    ids=["folder", "not-a-database", "newer", "damaged"],
)
def test_an_unusable_store_is_one_line_from_every_command(cli, tmp_path, make, words):
    path = make(tmp_path / "bad.sqlite")
    for name, args in COMMANDS.items():
        if make is damaged and name in ("export", "compare", "layers"):
            continue  # commands that only read are checked below: they read what they can
        proc = cli(*args, "--store", str(path))
        assert proc.stdout == "" or name == "sweep", (name, proc.stdout)  # sweep prints its notes first
        one_store_line(proc, words)
    assert not list(tmp_path.glob("edgebench-unsaved-*"))


def test_a_store_in_a_folder_that_cannot_be_made_is_one_line(cli):
    path = Path("/proc/edgebench-no-such-folder/s.sqlite")  # not writable, even by root
    for name in ("run", "sweep", "feasibility"):
        one_store_line(cli(*COMMANDS[name], "--store", str(path)), "cannot be created")
    one_store_line(cli("export", "--store", str(path)), "does not exist")


def test_a_damaged_store_is_refused_before_the_trial_runs(cli, tmp_path):
    path = damaged(tmp_path / "bad.sqlite")
    proc = cli("run", "--steps", "1", "--warmup", "0", "--json", "--store", str(path))
    one_store_line(proc, "is damaged (database disk image is malformed)")
    assert "move it aside" in proc.stderr


def test_a_damaged_store_given_to_a_reading_command_is_one_line(cli, tmp_path):
    path = damaged(tmp_path / "bad.sqlite")
    for args in (["export"], ["compare", "20260101", "20260102"], ["layers", "20260101"]):
        one_store_line(cli(*args, "--store", str(path)), "database disk image is malformed")


@pytest.fixture
def read_only(tmp_path):
    """Make a file read-only for this process, root included (``chattr +i``), and writable again afterwards."""
    made: list[Path] = []

    def make(path: Path) -> Path:
        if os.geteuid() == 0:
            if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode != 0:
                pytest.skip("running as root on a filesystem without chattr +i: nothing is read-only to root")
        else:
            path.chmod(0o444)
        made.append(path)
        return path

    yield make
    for path in made:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=False)
        path.chmod(0o644)


def test_a_read_only_store_refuses_writes_and_still_serves_reads(cli, tmp_path, read_only):
    path = stored_store(tmp_path / "ro.sqlite")
    with Store(path) as store:
        store.save(factories.result("20260102-000000-bbbbbbbb", [12.0, 13.0]), {"events": ""})
    read_only(path)
    for name in ("run", "sweep", "feasibility"):
        one_store_line(cli(*COMMANDS[name], "--store", str(path)), "is read-only")
    out = tmp_path / "trials.csv"
    proc = cli("export", "--store", str(path), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().count("\n") == 3  # a header and both trials
    proc = cli("compare", "20260101", "20260102", "--json", "--store", str(path))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rows"]


@pytest.fixture
def read_only_filesystem(tmp_path):
    """A folder on a tmpfs and the function that remounts it read-only, as a mounted backup is."""
    mount = tmp_path / "rofs"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "edgebench-test", str(mount)], check=True)

    def seal() -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)

    yield mount, seal
    subprocess.run(["umount", str(mount)], check=True)


def test_a_store_on_a_read_only_filesystem_serves_reads(cli, tmp_path, read_only_filesystem):
    """A WAL store needs a ``-shm`` file even to be read; on read-only media `trials` said it could not be opened."""
    mount, seal = read_only_filesystem
    path = stored_store(tmp_path / "s.sqlite")
    with Store(path) as store:
        store.save(factories.result("20260102-000000-bbbbbbbb", [12.0, 13.0]), {"events": ""})
    shutil.copy(path, mount / "s.sqlite")
    seal()
    proc = cli("trials", "--store", str(mount / "s.sqlite"))
    assert proc.returncode == 0, proc.stderr
    assert "20260102-000000-bbbbbbbb" in proc.stdout
    one_store_line(cli(*COMMANDS["run"], "--store", str(mount / "s.sqlite")), "is read-only")


def refusing_writes(path: Path) -> Path:
    """A healthy store whose inserts fail, as a disk that fills up during the trial makes them fail."""
    stored_store(path)
    db = sqlite3.connect(path)
    db.execute("CREATE TRIGGER full BEFORE INSERT ON trials BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END")
    db.commit()
    db.close()
    return path


def test_a_trial_the_store_refuses_is_printed_kept_and_imported_later(cli, tmp_path):
    path = refusing_writes(tmp_path / "full.sqlite")
    # the fake backend: a real worker, sampler and launcher, no framework (the store's fault is the point)
    proc = cli("run", "--backend", "fake", "--steps", "2", "--warmup", "0", "--infer-steps", "0", "--idle", "0",
               "--json", "--store", str(path))  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    result = json.loads(proc.stdout)  # the measurement is printed in full
    assert result["status"] == "ok" and result["latency"]["step_ms"]["n"] == 2
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("edgebench: error: --store: ") and "database or disk is full" in line
    kept = tmp_path / f"edgebench-unsaved-{result['trial_id']}.json"
    assert f"kept in {kept}" in line and f"`edgebench import {kept}`" in line

    elsewhere = tmp_path / "other.sqlite"
    proc = cli("import", str(kept), "--store", str(elsewhere))
    assert proc.returncode == 0, proc.stderr
    with Store(elsewhere) as store:
        assert store.get(result["trial_id"]).latency.step_ms.median == result["latency"]["step_ms"]["median"]
        assert '"phase": "train"' in store.series(result["trial_id"], "events")


def test_import_refuses_a_file_it_did_not_write(cli, tmp_path):
    other = tmp_path / "notes.json"
    other.write_text('{"a": 1}')
    proc = cli("import", str(other))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f'edgebench: error: FILE: {other} is not a trial kept by edgebench (no "kind": "edgebench-unsaved-trial")'
    )


def test_a_reading_command_reads_an_older_store_as_it_is(cli, tmp_path, read_only):
    """Read migrated in memory, the file left at its schema (``trials`` upgraded a schema-3 store in place, unasked,
    issue 39); a command that writes upgrades it."""
    writable = tmp_path / "v3.sqlite"
    shutil.copy(GOLDEN_STORE, writable)
    proc = cli("export", "--store", str(writable))
    assert proc.returncode == 0, proc.stderr
    assert sqlite3.connect(writable).execute("PRAGMA user_version").fetchone()[0] == 3
    assert cli("trials", "--store", str(writable)).returncode == 0
    assert sqlite3.connect(writable).execute("PRAGMA user_version").fetchone()[0] == 3
    frozen = tmp_path / "v3-frozen.sqlite"
    shutil.copy(GOLDEN_STORE, frozen)
    read_only(frozen)
    proc = cli("export", "--store", str(frozen))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 7  # a header and its six trials
