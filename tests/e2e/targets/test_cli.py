"""``--target`` on the commands, with targets named once in the configuration file, against a real sshd on
127.0.0.1 serving this same install (the "board" reads a copy of the Raspberry Pi 4 fixture tree)."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from tests.conftest import json_out
from tests.native import native_sampler
from tests.paths import FIXTURES as TEST_FIXTURES
from tests.sshd import sshd  # noqa: F401  (the session fixture)

FIXTURES = TEST_FIXTURES / "sysfs"


@pytest.fixture
def named_board(sshd, tmp_path, monkeypatch):  # noqa: F811
    """``board`` in a configuration file the commands read through ``$EDGEBENCH_CONFIG``."""
    tree = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rpi4", tree)
    settings = sshd.target_config(tmp_path / "work", sysfs_root=str(tree), device_name="Loopback Pi")
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"targets": {"board": settings}}))
    monkeypatch.setenv("EDGEBENCH_CONFIG", str(config))
    return tree


def test_run_on_a_named_target_is_stored_with_the_target(cli, named_board):
    proc = cli("run", "--target", "board", "--model", "lenet", "--batch-size", "4", "--steps", "2", "--warmup", "1",
               "--infer-steps", "0", "--idle", "0s", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json_out(proc)
    assert result["target"] == "board"
    assert result["status"] == "ok"
    import sqlite3

    with sqlite3.connect(cli.store_path) as db:
        count = db.execute("select count(*) from trials").fetchone()[0]
    assert count == 1
    assert not list((named_board.parent / "work").glob("session-*"))  # the device's session folder is gone


def test_sensors_snapshot_and_replay_read_the_same_numbers(cli, named_board, tmp_path):
    remote = cli("sensors", "--target", "board", "--json")
    assert remote.returncode == 0, remote.stderr
    remote_reports = {r["name"]: r for r in json_out(remote)["sensors"]}
    assert json_out(remote)["target"] == "board"
    assert remote_reports["cpu_freq"]["available"]
    snap = tmp_path / "snap"
    taken = cli("snapshot", "--target", "board", "-o", str(snap))
    assert taken.returncode == 0, taken.stderr
    assert "copied" in taken.stdout
    replay = cli("sensors", "--sysfs-root", str(snap), "--json")
    replay_reports = {r["name"]: r for r in json_out(replay)["sensors"]}
    for name in ("cpu_freq", "thermal"):
        assert replay_reports[name]["values"] == remote_reports[name]["values"], name
    again = cli("snapshot", "--target", "board", "-o", str(snap))
    assert again.returncode == 2 and "not an empty folder" in again.stderr


def test_unknown_name_and_unreachable_target_are_one_line_exit_2(cli, named_board):
    unknown = cli("sensors", "--target", "nosuch")
    assert unknown.returncode == 2
    assert unknown.stderr.count("\n") == 1 and "named target (board)" in unknown.stderr
    down = cli("run", "--target", "ssh://127.0.0.1:1", "--steps", "1")
    assert down.returncode == 2 and "cannot reach ssh://127.0.0.1:1" in down.stderr


@pytest.mark.parametrize("sampler", ["auto", "python"])
def test_monitor_on_a_target_samples_there_and_copies_its_files_back(cli, named_board, tmp_path, sampler):
    """auto: the native sampler streams its records from the board (no Python needed there); python: the board's
    own edgebench monitors and its files are copied back."""
    native_sampler("x86_64")
    out = tmp_path / "mon"
    proc = cli("monitor", "--target", "board", "--out", str(out), "--interval", "100ms", "--duration", "1s",
               "--sampler", sampler)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    header, *rows = (out / "samples.csv").read_text().splitlines()
    assert len(rows) >= 2
    freq = header.split(",").index("cpu0_freq_khz")
    assert {row.split(",")[freq] for row in rows} == {"1500000"}  # the board's tree, on the far side
    summary = json.loads((out / "summary.json").read_text())
    assert summary["samples"] == len(rows) and summary["stopped_by"] == "end of --duration"
    assert summary["sampler"] == ("native" if sampler == "auto" else "python")
    assert not list((named_board.parent / "work").glob("monitor-*"))  # its folder on the board is gone


def test_sweep_targets_axis_runs_each_target_and_stores_both(cli, sshd, tmp_path):  # noqa: F811
    import sqlite3

    boards = {name: sshd.target_config(tmp_path / f"work-{name}") for name in ("a", "b")}
    config = tmp_path / "fleet.yaml"
    config.write_text(yaml.safe_dump({
        "targets": boards, "models": ["lenet"], "batch_sizes": [2], "steps": 1, "warmup": 0,
        "infer_steps": 0, "idle": "0s",
    }))  # fmt: skip
    planned = cli("sweep", str(config), "--dry-run", timeout=400)  # each target plans its own sweep, nothing runs
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "[a] sweep fleet-a: 1 trials" in planned.stdout and "[b] sweep fleet-b: 1 trials" in planned.stdout
    proc = cli("sweep", str(config), timeout=400)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[a] " in proc.stdout and "[b] " in proc.stdout
    with sqlite3.connect(cli.store_path) as db:
        rows = db.execute("select sweep_id from sweep_trials").fetchall()
    assert sorted(r[0] for r in rows) == ["fleet-a", "fleet-b"]


def test_partition_runs_its_traced_trial_on_the_target_it_is_given(cli, named_board):
    """`partition` runs a layer-traced trial when none is stored: on `--target`'s device, stored with it; a second
    analysis finds it there, and this machine (none of its own stored) is not taken for the board."""
    proc = cli("partition", "--target", "board", "--model", "lenet", "--steps", "2", "--warmup", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert "no stored layer-traced trial of lenet on board: running one" in proc.stderr
    from edgebench.store import Store

    with Store(cli.store_path) as db:
        (stored,) = db.trials()
    assert stored.target == "board" and stored.trial_id in json_out(proc)["mobile_source"]
    again = cli("partition", "--target", "board", "--model", "lenet", "--json")
    assert again.returncode == 0 and "running one" not in again.stderr, again.stderr
