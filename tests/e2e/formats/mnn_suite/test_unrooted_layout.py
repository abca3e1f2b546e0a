"""The MNN suite's unrooted layout through the command line: export, then import back."""

from __future__ import annotations

from edgebench.formats.mnn_suite.export import build_files
from edgebench.formats.mnn_suite.importing import read_folder


def test_a_trial_given_no_cores_exports_the_unrooted_layout_and_reads_back_unplaced(cli, tmp_path):
    """The suite writes <Device>_Core_<mask>/ only where it applied a mask with taskset, and <Device>/ where placement
    was left to the device: a trial given no --cores (run on every allowed core) is the second, one given --cores the
    first; importing each folder gives back a trial without, and with, an asked core set."""
    common = ("--backend", "fake", "-m", "lenet", "-b", "2", "--steps", "2", "--warmup", "0", "--idle", "0")
    assert cli("run", *common).returncode == 0
    placed = cli("run", *common, "--cores", "0x1")
    assert placed.returncode == 0, placed.stderr
    out = tmp_path / "suite"
    done = cli("export", "--format", "mnn-suite", "--device", "BOARD", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert {p.name for p in out.iterdir() if p.is_dir()} == {"BOARD", "BOARD_Core_0x1"}
    assert (out / "batchsize_energy_BOARD.csv").is_file()
    back = read_folder(out / "BOARD", device="BOARD").trials
    assert back and all(r.trial.cores is None and r.trial.cores_mask is None for r, _ in back)
    back = read_folder(out / "BOARD_Core_0x1", device="BOARD").trials
    assert back and all(r.trial.cores == (0,) and r.trial.cores_mask == "0x1" for r, _ in back)
    # a trial of the unrooted folder exports to it again
    assert build_files([r for r, _ in read_folder(out / "BOARD", device="BOARD").trials], "BOARD",
                       lambda _id, _kind: None).keys() >= {"batchsize_energy_BOARD.csv"}  # fmt: skip
