"""Exports: the MNN suite's files against golden copies, and the CSV / Parquet tables of every measurement.  The end-
to-end half: what runs the real command, a real worker or another process; the rest is in
tests/unit/formats/test_export.py.
"""

import csv
import io
from pathlib import Path

import pytest

from tests.factories import phone_store
from tests.paths import MNN_SUITE_GOLDEN as GOLDEN


def test_mnn_suite_cli_writes_the_files_and_refuses_without_a_device(tmp_path, cli):
    phone_store(cli.store_path).close()
    proc = cli("export", "--format", "mnn-suite", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --device:")
    proc = cli("export", "--format", "mnn-suite", "--device", "MEIZU", "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    written = {str(Path(p).relative_to(tmp_path / "out")) for p in proc.stdout.split()}
    assert written == {str(p.relative_to(GOLDEN)) for p in GOLDEN.rglob("*") if p.is_file()}
    assert cli("export", "--format", "mnn-suite", "--device", "ME IZU").returncode == 2


def test_csv_has_every_trial_with_every_measurement(tmp_path, cli):
    phone_store(cli.store_path).close()
    proc = cli("export", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 8
    header = list(rows[0])
    assert header[:5] == ["trial_id", "sweep.sweep_id", "sweep.trial_key", "status", "reason"]
    for column in ("step_time_ms.mean", "step_time_ms.ci95", "throughput_sps", "peak_memory_bytes", "energy_j",
                   "energy_per_sample_j", "infer_time_ms.median", "env.hostname", "mask"):  # fmt: skip
        assert column in header
    first = rows[1]
    assert first["trial_id"] == "20260101-000002-0002" and first["step_time_ms.mean"] == "12.0"
    assert first["cores"] == "4,5,6,7" and first["mask"] == "f0" and first["energy_j"] == "12.5"
    assert rows[4]["status"] == "crashed" and rows[4]["step_time_ms.mean"] == "" and rows[0]["energy_j"] == ""


def test_parquet_of_trials_and_of_steps(tmp_path, cli):
    pq = pytest.importorskip("pyarrow.parquet")
    phone_store(cli.store_path).close()
    proc = cli("export", "--format", "parquet", "--out", str(tmp_path / "t.parquet"))
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(tmp_path / "t.parquet").to_pydict()
    assert table["step_time_ms.mean"][1] == 12.0 and table["batch_size"] == [1, 1, 2, 1, 2, 1, 4, 4]
    assert table["energy_j"][:3] == [None, 12.5, 20.0]
    proc = cli("export", "--format", "parquet", "--table", "steps", "--out", str(tmp_path / "s.parquet"))
    steps = pq.read_table(tmp_path / "s.parquet").to_pydict()
    train = [d for t, p, d in zip(steps["trial_id"], steps["phase"], steps["duration_ms"], strict=True)
             if t == "20260101-000002-0002" and p == "train"]  # fmt: skip
    assert train == [10.0, 12.0, 14.0]
    proc = cli("export", "--format", "parquet")
    assert proc.returncode == 2 and "--out" in proc.stderr


def test_export_filters(tmp_path, cli):
    proc = cli("export")
    assert proc.returncode == 2 and "does not exist" in proc.stderr
    phone_store(cli.store_path).close()
    proc = cli("export", "--sweep", "nope")
    assert proc.returncode == 2 and "no sweep 'nope'" in proc.stderr
    proc = cli("export", "--host", "elsewhere")
    assert proc.returncode == 2 and "no trials" in proc.stderr
