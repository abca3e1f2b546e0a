"""Exports: the MNN suite's files against golden copies, and the CSV / Parquet tables of every measurement."""

import csv
import io
import json
import os

import pytest

from edgebench.formats.mnn_suite.export import Setting, build_files, folder_names
from edgebench.store import Store
from tests.factories import MS, result, save
from tests.paths import FIXTURES

GOLDEN = FIXTURES / "golden" / "mnn_suite"
F0 = (4, 5, 6, 7)
T0 = 10**12


#: The sampler's record of a phone's power_supply sensor: the device channel the energy is integrated from, and
#: the clock anchor that puts its samples on the wall clock (T0 on the monotonic clock = 2021-04-13 05:02:04 UTC).
PHONE_META = json.dumps(
    {"interval_ms": 5.0, "columns": [], "sensors": ["power_supply"], "unavailable": {},
     "anchor_wall_ns": 1_618_290_124_000_000_000, "anchor_mono_ns": T0,
     "power_channels": [{"name": "device", "source": "power_supply", "scope": "total",
                         "power_column": "device_power_mw"}]}
)  # fmt: skip


def power_samples(peak_ua: int) -> dict[str, str]:
    """Battery and USB rails sampled every 5 ms across the first 60 ms (warm-up and training of the trials below);
    the device draws 2 W, and 3 W in the 5 ms around the peak."""
    rows = ["t_ns,battery_current_ua,battery_voltage_uv,usb_current_ua,usb_voltage_uv,device_power_mw"]
    for k in range(13):
        current = peak_ua if k == 6 else peak_ua - 1000
        rows.append(f"{T0 + k * 5 * MS},{current},{4_400_000 - k},{480_000 + k},{4_850_000},{3000 if k == 6 else 2000}")
    return {"samples": "\n".join(rows) + "\n", "sampler_meta": PHONE_META}


def phone_store(path) -> Store:
    """A Meizu-like store: two models on the big cores with energy and power rails, a frequency trial, a little-core
    mask at two thread counts, a failed trial and a configuration measured twice."""
    store = Store(path)
    energy = dict(energy_j=12.5, energy_per_step_j=0.625, energy_per_sample_j=0.3125)
    common = dict(cores=F0, threads=4, peak_memory_bytes=96 * 2**20, virtual_memory_peak_bytes=512 * 2**20,
                  process_cpu_pct=312.5, infer_process_cpu_pct=250.0)  # fmt: skip
    trials = [
        # (id, steps ms, infer ms, fields, series)
        ("20260101-000001-0001", [20.0, 22.0, 24.0], [4.0, 5.0], dict(batch_size=1, **common), {}),  # superseded
        ("20260101-000002-0002", [10.0, 12.0, 14.0], [2.0, 3.0], dict(batch_size=1, **common, **energy),
         power_samples(500_000)),
        ("20260101-000003-0003", [15.0, 15.0, 18.0], [2.5, 3.5], dict(batch_size=2, **common, energy_j=20.0),
         power_samples(510_000)),
        ("20260101-000004-0004", [250.0, 260.0], [40.0], dict(model="mobilenet_v2", batch_size=1, **common), {}),
        ("20260101-000005-0005", [30.0, 31.0], [], dict(model="mobilenet_v2", batch_size=2, status="crashed",
         reason="RuntimeError: x", cores=F0, threads=4, step_time_ms=None, throughput_sps=None), {}),
        ("20260101-000006-0006", [11.0, 13.0], [2.0], dict(batch_size=1, cores=F0, threads=4, freq_khz=1_708_800), {}),
        ("20260101-000007-0007", [40.0, 44.0], [8.0], dict(batch_size=4, cores=(0, 1, 2, 3), threads=4), {}),
        ("20260101-000008-0008", [60.0, 64.0], [9.0], dict(batch_size=4, cores=(0, 1, 2, 3), threads=2), {}),
    ]  # fmt: skip
    for trial_id, steps, infer, fields, series in trials:
        save(store, result(trial_id, steps, infer_ms=infer, **fields), steps, infer, **series)
    return store


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
