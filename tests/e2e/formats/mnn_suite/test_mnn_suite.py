"""The MNN-based suite's users switch without losing a script or a result.  The end-to-end half: what runs the real
command, a real worker or another process; the rest is in tests/unit/formats/mnn_suite/test_mnn_suite.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgebench.formats.mnn_suite.importing import read_processed_data
from edgebench.store import Store
from tests.factories import csv_rows
from tests.paths import SUITE_REPO as REPO


def test_import_holds_what_the_suite_measured_of_the_meizu(tmp_path, cli):
    proc = cli("import", "--format", "mnn-suite", str(REPO / "MEIZU_Freq_1708800"), "--device", "Meizu 16T")
    assert proc.returncode == 0, proc.stderr
    assert "imported 6 trials" in proc.stdout
    with Store(cli.store_path, read_only=True) as store:
        trials = {r.trial.batch_size: r for r in store.query()}
    assert sorted(trials) == [1, 2, 4, 8, 16, 32]
    lenet = trials[1]
    assert lenet.imported_from == "mnn-suite:MEIZU_Freq_1708800" and lenet.trial.backend == "mnn"
    assert lenet.trial.model == "lenet" and lenet.trial.freq_khz == 1_708_800 and lenet.trial.cores is None
    assert lenet.device.hostname == "Meizu 16T" and lenet.trial.warmup == 5 and lenet.trial.steps == 1124
    # the suite printed one mean: the rest of the distribution stays empty rather than made up
    assert (
        lenet.latency.step_ms.mean == 8.8252
        and lenet.latency.step_ms.n == 1124
        and lenet.latency.step_ms.median is None
    )
    assert lenet.latency.infer_ms.mean == 0.775617 and lenet.device.extra["mnn_suite_session_infer_ms"] == 0.473
    assert lenet.memory.peak_bytes == 67 * 2**20 and lenet.memory.virtual_peak_bytes == 88 * 2**20
    assert lenet.cpu.process_pct == 223 and lenet.cpu.infer_process_pct is None  # the suite wrote 0: no reading
    # batchsize_energy on its own readings, against the figures the suite published: its sampling (every ~0.5 s)
    # bounds the agreement, three standard errors of the window's mean power
    published = {int(r[""]): float(r["Lenet"]) for r in csv_rows((REPO / "batchsize_energy_MEIZU_Freq_1708800.csv")
                                                                 .read_text())}  # fmt: skip
    rows = read_processed_data(REPO / "MEIZU_Freq_1708800/processed_data/Lenet/processed_data_Lenet.csv")
    for bs, figure in published.items():
        r = trials[bs]
        stamp = (REPO / f"MEIZU_Freq_1708800/train_stamp/Lenet/train_stamp_{bs}.result").read_text().split()
        t0_ms, t1_ms = int(stamp[stamp.index("training") + 2]), int(stamp[stamp.index("trainning") + 2])
        watts = np.array([row.values["usb_power_mw"] / 1e3 for row in rows if t0_ms < row.stamp_ms < t1_ms])
        error_j = 3 * (t1_ms - t0_ms) / 1e3 * watts.std(ddof=1) / np.sqrt(len(watts))
        assert abs(r.energy.energy_j - figure) <= error_j, (bs, r.energy.energy_j, figure, error_j)
        assert r.energy.per_step_j == pytest.approx(r.energy.energy_j / (5 + r.trial.steps + 1))
    # imported again: nothing doubles
    again = cli("import", "--format", "mnn-suite", str(REPO / "MEIZU_Freq_1708800"), "--device", "Meizu 16T")
    assert again.returncode == 0 and "imported 0 trials" in again.stdout and "6 already there" in again.stdout


def test_imported_runs_export_back_to_the_suites_files_and_compare_beside_new_ones(tmp_path, cli):
    assert cli("import", "-f", "mnn-suite", str(REPO / "MEIZU_Freq_1708800"), "--device", "MEIZU").returncode == 0
    proc = cli("export", "--format", "mnn-suite", "--device", "MEIZU", "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    out, source = tmp_path / "out" / "MEIZU_Freq_1708800", REPO / "MEIZU_Freq_1708800"
    for name in ("train_stamp_1.result", "train_stamp_32.result"):  # the suite's stamp files, verbatim
        assert (out / "train_stamp/Lenet" / name).read_text() == (source / "train_stamp/Lenet" / name).read_text()
    base = "processed_data/Lenet"
    assert (out / base / "time_table_Lenet.csv").read_text() == (source / base / "time_table_Lenet.csv").read_text()
    ours, theirs = (csv_rows((d / base / "processed_data_Lenet.csv").read_text()) for d in (out, source))
    assert [o | {"processPid": ""} for o in ours] == [t | {"processPid": ""} for t in theirs]
    with Store(cli.store_path, read_only=True) as store:
        ids = {r.trial.batch_size: r.trial_id for r in store.query()}
    shown = cli("compare", ids[1], ids[32])
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert any("step mean" in line and "8.83" in line and "28.67" in line for line in lines)


def test_import_refuses_what_is_not_a_suite_folder(tmp_path, cli):
    proc = cli("import", "--format", "mnn-suite", str(REPO / "MEIZU_Freq_1708800"))
    assert proc.returncode == 2 and "--device" in proc.stderr
    proc = cli("import", "--format", "mnn-suite", str(tmp_path), "--device", "X")
    assert proc.returncode == 2 and "train_stamp" in proc.stderr
    assert not Path(cli.store_path).exists() or "imported" not in proc.stdout
