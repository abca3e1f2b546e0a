"""A sweep file, ``--set`` or flag the user got wrong is one line naming it, exit 2; an empty file is refused."""

from __future__ import annotations

import pytest


def one_line(proc, expected: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == f"edgebench: error: {expected}"


@pytest.mark.parametrize(
    ("content", "byte", "offset"),
    [(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)), "80", 136), ("models: [résnet]\n".encode("latin-1"), "e9", 10)],
    ids=["binary", "latin-1"],
)
def test_a_file_that_is_not_utf8_text_is_one_line(cli, tmp_path, content, byte, offset):
    path = tmp_path / "grid.yaml"
    path.write_bytes(content)
    one_line(
        cli("sweep", str(path), "--dry-run"),
        f"{path}: is not a text file in UTF-8 (byte 0x{byte} at offset {offset}): give the sweep's YAML file, "
        "saved as UTF-8",
    )


def test_a_key_given_twice_is_an_error_not_the_last_one(cli, tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text("models: [lenet]\nbatch_sizes: [1]\nmodels: [alexnet]\n")
    one_line(
        cli("sweep", str(path), "--dry-run"),
        f"{path}: not valid YAML at line 3, column 1: 'models' is given twice (first at line 1); keep one",
    )


def test_an_unclosed_list_in_set_is_an_error_not_a_model_name(cli):
    one_line(
        cli("sweep", "--set", "models=[lenet", "--dry-run"),
        "--set models: '[lenet' is not valid YAML (expected ',' or ']', but got '<stream end>'); "
        "e.g. models=[a, b] or models='text'",
    )
    proc = cli("sweep", "--set", "models=lenet", "--set", "cores=0x1", "--dry-run")  # bare text is still text
    assert proc.returncode == 0, proc.stderr


def test_an_empty_file_is_refused_not_the_default_sweep(cli, tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text("# nothing yet\n")
    store = tmp_path / "s.sqlite"
    one_line(
        cli("sweep", str(path), "--store", str(store)),
        f"{path}: sets nothing; give at least one key (e.g. models: [lenet] or batch_sizes: [1, 8]), or run "
        "`edgebench sweep` with no file for the default sweep",
    )
    assert not store.exists()


@pytest.mark.parametrize("text", ["batch_sizes: [true]", "steps: yes", "threads: [1, on]"])
def test_a_yes_no_value_is_refused_not_read_as_one(cli, tmp_path, text):
    path = tmp_path / "grid.yaml"
    path.write_text(text + "\n")
    proc = cli("sweep", str(path), "--dry-run")
    assert proc.returncode == 2, proc.stdout
    assert "is a yes/no, not a value of this setting; quote it if you meant text" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("flag", ["--cores", "--batch-size", "--frequency"])
def test_an_empty_flag_is_refused_not_the_default(cli, flag):
    proc = cli("run", flag, "", "--no-store")
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == f"edgebench: error: {flag}: is empty; give a value, or leave {flag} out for its default"
    )


def test_an_idle_baseline_as_long_as_the_timeout_is_refused(cli, tmp_path):
    proc = cli("run", "--idle", "100h", "--no-store")
    one_line(proc, "--idle: an idle baseline of 360000 s leaves nothing of the 1800 s timeout for the trial; shorten "
             "--idle or raise --timeout")  # fmt: skip
    path = tmp_path / "grid.yaml"
    path.write_text("idle: 10m\ntimeout: [5m, 1h]\n")
    proc = cli("sweep", str(path), "--dry-run")
    assert proc.returncode == 2 and "leaves nothing of the 300 s timeout" in proc.stderr


def test_a_sweep_refused_after_opening_its_store_leaves_no_store_file(cli, tmp_path):
    """Seen: a sweep refused for a frequency this device cannot set left an empty store file behind."""
    store = tmp_path / "fresh.sqlite"
    proc = cli(
        "sweep",
        "--set",
        "models=[lenet]",
        "--set",
        "frequencies=[1GHz]",
        "--store",
        str(store),
        "--sysfs-root",
        str(tmp_path),
    )  # fmt: skip  (an empty tree: no cpufreq to set)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "frequencies" in proc.stderr
    assert not any(tmp_path.glob("fresh.sqlite*"))


def test_frameworks_with_a_backend_this_edgebench_lacks_is_one_line(cli, tmp_path):
    proc = cli("frameworks", "--backends", "mace", "--store", str(tmp_path / "s.sqlite"))
    one_line(
        proc,
        "--backends: mace: not a backend of this edgebench; choose from torch, onnxruntime, mnn, litert, executorch, "
        "executorch-portable, command, fake",
    )
    assert not (tmp_path / "s.sqlite").exists()


def test_partition_plot_into_a_missing_folder_is_one_line(cli, tmp_path):
    proc = cli("partition", "-m", "lenet", "--plot", str(tmp_path / "missing" / "p.png"))
    one_line(proc, f"--plot: folder {tmp_path / 'missing'} does not exist; create it or give another path")
