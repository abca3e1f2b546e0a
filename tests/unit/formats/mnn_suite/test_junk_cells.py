"""The MNN suite's files as other people left them (issue 39): junk cells (no ``stamp`` column, ``abc``, ``²``, huge
epochs, another encoding, ``inf``, ``nan``) raised a traceback; a cell that is no number is now no value, a file
that is not the suite's is one line naming it, and nothing is stored from a folder that is refused."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgebench.errors import UsageError
from edgebench.formats.mnn_suite.importing import read_folder
from edgebench.formats.mnn_suite.series import parse_train_stamp
from tests.factories import refused
from tests.paths import SUITE_REPO

PROCESSED = "processed_data/Lenet/processed_data_Lenet.csv"
JUNK = ["abc", "²", "9" * 400, "1e400", "inf", "-inf", "nan", "", "0x10", "١٢٣", "\udcff"]


@pytest.fixture
def folder(tmp_path):
    copy = tmp_path / "XIAOMI"
    shutil.copytree(SUITE_REPO / "XIAOMI", copy)
    return copy


def rewrite(path, change):
    lines = path.read_text().splitlines()
    path.write_bytes(("\n".join(change(lines)) + "\n").encode("utf-8", "surrogateescape"))


@pytest.mark.parametrize("cell", JUNK)
def test_a_junk_cell_is_no_value(folder, cell):
    def junk(lines):
        cells = lines[2].split(",")
        cells[1] = cells[3] = cell  # the stamp and VIRT
        return [*lines[:2], ",".join(cells), *lines[3:]]

    rewrite(folder / PROCESSED, junk)
    assert read_folder(folder, "Xiaomi").trials  # the rest of the file still imports


def test_a_file_without_its_stamp_column_or_in_another_encoding_is_one_line(folder, tmp_path, capsys):
    rewrite(folder / PROCESSED, lambda lines: [lines[0].replace("stamp", "stump"), *lines[1:]])
    store = tmp_path / "s.sqlite"
    line = refused(capsys, "import", "--format", "mnn-suite", str(folder), "--device", "X", "--store", str(store))
    assert "no stamp column" in line and not store.exists()
    (folder / PROCESSED).write_bytes(b",stamp,VIRT\n1,\xff\xfe,\xe9\n")
    read_folder(folder, "X")  # latin-1 bytes: no rows from that file, no traceback


@settings(max_examples=80)
@given(st.lists(st.text(max_size=10), min_size=1, max_size=8))
def test_any_processed_data_cells_import_or_are_one_line(tmp_path_factory, cells):
    folder = tmp_path_factory.mktemp("suite") / "XIAOMI"
    shutil.copytree(SUITE_REPO / "XIAOMI", folder)
    rewrite(folder / PROCESSED, lambda lines: [*lines[:3], ",".join(c.replace("\n", " ") for c in cells), *lines[3:]])
    try:
        read_folder(folder, "X")
    except UsageError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=200)
@given(st.text(max_size=60))
def test_a_stamp_file_of_any_text_is_windows_or_none(text):
    windows = parse_train_stamp(f"Begin training : {text}\nEnd trainning : 1618305025663\n")
    assert windows.train is None or all(isinstance(v, int) and v < 10**16 for v in windows.train)


@settings(max_examples=100)
@given(st.text(max_size=300))
def test_the_suites_logs_of_any_text_read_as_rows_or_nothing(tmp_path_factory, text):
    """``usage_monitor_<Net>.result`` and ``train_bench_<Net>.result`` as other people left them."""
    from edgebench.formats.mnn_suite.importing import read_train_bench, read_usage_monitor

    folder = tmp_path_factory.mktemp("logs")
    monitor, bench = folder / "usage_monitor.result", folder / "train_bench.result"
    monitor.write_text(f"NEW DATA 1618305025562\n{text}\nEND\nNEW DATA {text}\nusb_current {text}\nEND\n")
    bench.write_text(f"warmUp: {text}\n{text}\nTraining latency of Lenet is : {text} ms (batchsize is 8)\n")
    assert all(isinstance(r.stamp_ms, int) for r in read_usage_monitor(monitor))
    assert all(isinstance(b, int) for b in read_train_bench(bench))
