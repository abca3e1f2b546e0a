"""Exports: the MNN suite's files against golden copies, and the CSV / Parquet tables of every measurement."""

import csv
import io
import os

import pytest

from edgebench.formats.mnn_suite.export import Setting, build_files, folder_names
from tests.factories import phone_store
from tests.paths import MNN_SUITE_GOLDEN as GOLDEN


def test_mnn_suite_files_match_the_golden_copies(tmp_path):
    with phone_store(tmp_path / "s.sqlite") as store:
        files = build_files(store.query(), "MEIZU", store.series)
    if os.environ.get("EDGEBENCH_UPDATE_GOLDEN"):
        for rel, text in files.items():
            (GOLDEN / rel).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / rel).write_text(text)
    golden = {str(p.relative_to(GOLDEN)): p.read_text() for p in GOLDEN.rglob("*") if p.is_file()}
    assert sorted(files) == sorted(golden)
    for rel, text in files.items():
        assert text == golden[rel], rel


def test_golden_files_hold_what_was_measured():
    """The golden copies are not just whatever the code wrote: spot-check them against the stored figures."""
    time_table = (GOLDEN / "MEIZU_Core_f0/processed_data/Lenet/time_table_Lenet.csv").read_text().splitlines()
    # six decimals as the suite's benchmark prints them; no MNN session benchmark ran: nan
    assert time_table == [
        ",batchsize,expr_train,expr_infer,session_infer",
        "1,1,12.000000,2.500000,nan",
        "2,2,16.000000,3.000000,nan",
    ]
    rows = list(csv.DictReader(io.StringIO((GOLDEN / "MEIZU_Core_f0/processed_data/Lenet/performance_Lenet.csv")
                                           .read_text())))  # fmt: skip
    # whole numbers as integers, as the suite writes them; the rails' maxima over the training run, raw uA and uV
    assert rows[0] == {"": "1", "batchsize": "1", "VIRT": "512", "RES": "96", "SHR": "nan", "cpuUsage_train": "312.5",
                       "cpuUsage_infer": "250", "battery_current": "500000", "battery_voltage": "4400000",
                       "usb_current": "480009", "usb_voltage": "4850000"}  # fmt: skip
    # The whole training run (its warm-up step included: 10 + 10 + 12 + 14 = 46 ms, 0..46 ms on the samples' clock)
    # at 2 W, rising to 3 W at the 30 ms sample and back by 35 ms: 2 W x 46 ms + 1/2 x 1 W x 10 ms = 0.097 J (no idle
    # window was measured, so nothing is subtracted).
    energy = (GOLDEN / "batchsize_energy_MEIZU_Core_f0.csv").read_text().splitlines()
    assert energy[0] == ",Lenet,GoogLenet,Squeezenet,Alexnet,Mobilenet"
    assert energy[1].split(",")[0] == "1" and float(energy[1].split(",")[1]) == pytest.approx(0.097)
    assert energy[1].endswith(",nan,nan,nan,nan")  # Mobilenet ran but had no power sensor: nan, never 0
    # singleBatch: / the run's 4 batches (1 warm-up + 3 measured); singleSample: / (4 batches x batch size 2)
    bs2 = float(energy[2].split(",")[1])
    single_batch = (GOLDEN / "singleBatch_energy_MEIZU_Core_f0.csv").read_text().splitlines()[2].split(",")
    single_sample = (GOLDEN / "singleSample_energy_MEIZU_Core_f0.csv").read_text().splitlines()[2].split(",")
    assert float(single_batch[1]) == pytest.approx(bs2 / 4) and float(single_sample[1]) == pytest.approx(bs2 / 8)
    mobilenet = (GOLDEN / "MEIZU_Core_f0/processed_data/Mobilenet/time_table_Mobilenet.csv").read_text().splitlines()
    assert mobilenet[1:] == ["1,1,255.000000,40.000000,nan"]  # the crash is left out
    stamp = (GOLDEN / "MEIZU_Core_f0/train_stamp/Lenet/train_stamp_1.result").read_text().splitlines()
    # epoch ms from the sampler's clock anchor; training from the warm-up step's start, inference after it
    assert stamp == ["Begin training : 1618290124000", "End trainning : 1618290124046",
                     "Begin inferring : 1618290124046", "End inferring : 1618290124051"]  # fmt: skip
    assert (GOLDEN / "MEIZU_Freq_1708800/processed_data/Lenet/time_table_Lenet.csv").exists()
    folders = {p.name for p in GOLDEN.iterdir() if p.is_dir()}
    # two thread counts on the little cores (mask f): the folder names say which is which
    assert folders == {"MEIZU_Core_f0", "MEIZU_Freq_1708800", "MEIZU_Core_f_Threads_2", "MEIZU_Core_f_Threads_4"}


def test_folder_names_disambiguate_only_what_collides():
    def setting(mask="f0", freq=0, threads=4, precision="fp32"):
        return Setting(mask, freq, threads, precision, "torch", "cpu")

    names = folder_names("PI", [setting(), setting(mask="3"), setting(freq=600_000), setting(freq=600_000, mask="3")])
    assert names[setting()] == "PI_Core_f0" and names[setting(mask="3")] == "PI_Core_3"
    assert names[setting(freq=600_000)] == "PI_Freq_600000_Core_f0"
    names = folder_names("PI", [setting(), setting(threads=2), setting(precision="bf16", mask="1")])
    assert (
        names[setting(threads=2)] == "PI_Core_f0_Threads_2"
        and names[setting(precision="bf16", mask="1")] == "PI_Core_1"
    )


def test_trials_csv_matches_its_golden_copy(tmp_path):
    from edgebench.report.tables import columns_of, to_csv, trial_row

    with phone_store(tmp_path / "s.sqlite") as store:
        rows = [trial_row(r) for r in store.query()]
    text = to_csv(rows, columns_of(rows))
    golden = GOLDEN.parent / "trials.csv"
    if os.environ.get("EDGEBENCH_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_probe_a_label_leading_out_of_out_writes_inside_it(tmp_path, capsys):
    """Issue 39, paths from data: a ``--command`` trial labelled ``x:/../../../../../OUTSIDE/escaped`` exported with
    ``export --format mnn-suite --out D`` wrote ``escaped.csv``, ``escaped.result`` and ``escaped/`` outside D."""
    from edgebench.cli import main
    from edgebench.store import Store
    from tests.factories import add

    label = "x:/../../../../../OUTSIDE/escaped"
    deep = tmp_path / "a" / "b" / "c" / "d" / "e"
    deep.mkdir(parents=True)
    with Store(tmp_path / "s.sqlite") as store:
        add(store, "20260101-000000-aaaa0001", [10.0, 11.0, 12.0], model=label, cores=[0, 1])
    out = deep / "D"
    assert main(["export", "--format", "mnn-suite", "--out", str(out), "--device", "X", "--store",
                 str(tmp_path / "s.sqlite")]) == 0  # fmt: skip
    written = [p for p in tmp_path.rglob("*") if p.is_file() and not p.name.startswith("s.sqlite")]
    assert written and all(p.is_relative_to(out) for p in written), written
    assert any("OUTSIDE_escaped" in p.name for p in written)


def test_names_from_data_are_one_file_name_each():
    from edgebench.formats.mnn_suite.export import suite_net

    assert suite_net("lenet") == "Lenet" and suite_net("../../x") == "_.._x"
    names = folder_names("X", [Setting(mask="../../up", freq_khz=0, threads=1, precision="fp32", backend="torch",
                                       device="cpu")])  # fmt: skip
    assert "/" not in next(iter(names.values()))


def test_an_export_folder_names_the_frequency_applied_not_the_one_asked(tmp_path):
    """`--frequency 1.7GHz` runs at the policy's 1708.8 MHz: the suite's folder for it is MEIZU_Freq_1708800."""
    from edgebench.records.result import Cpu
    from edgebench.store import Store
    from tests.factories import result, save

    asked = result("20260101-000001-0001", [10.0, 11.0], cores=(4, 5, 6, 7), threads=4, freq_khz=1_700_000)
    applied = asked.model_copy(update={"cpu": Cpu(freq_applied_khz={"policy4": 1_708_800, "policy7": 1_708_800})})
    with Store(tmp_path / "s.sqlite") as store:
        save(store, applied, [10.0, 11.0])
        files = build_files(store.query(), "MEIZU", store.series)
    assert {rel.split("/")[0] for rel in files if "/" in rel} == {"MEIZU_Freq_1708800"}
