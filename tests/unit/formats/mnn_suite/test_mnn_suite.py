"""The MNN-based suite's users switch without losing a script or a result.

* Export: ``fixtures/mnn_suite/phone_sweep.sqlite`` is a sweep edgebench ran on a phone stand-in with a USB power
  rail; ``fixtures/mnn_suite/suite_outputs`` is what the suite's own scripts (``energy_compute.py``,
  ``temperature.py``, ``dataprocess.py``; commit and commands in that folder's README) wrote from its export.  The
  export must still be what those scripts read, and the energy they computed must agree with edgebench's.
* Import: ``fixtures/mnn_suite/suite_repo`` holds real result files of the suite's Meizu 16T and Xiaomi MI 9
  (copied from its repository); they must come in as imported trials holding what the suite measured.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from edgebench.formats.mnn_suite.export import Setting, build_files, folder_names
from edgebench.formats.mnn_suite.importing import read_folder, read_processed_data, read_usage_monitor
from edgebench.formats.mnn_suite.series import load_series, mib_text, nan_or
from edgebench.host.cpuset import format_mask
from edgebench.measure.power import above_idle
from edgebench.store import Store
from tests.factories import csv_rows
from tests.paths import FIXTURES as TEST_FIXTURES
from tests.paths import SUITE_REPO

FIXTURES = TEST_FIXTURES / "mnn_suite"
SUITE = FIXTURES / "suite_outputs"
FOLDER = "PHONE_Core_03"


@pytest.fixture(scope="module")
def phone(tmp_path_factory) -> tuple[dict[str, str], list]:
    """The export of the phone sweep, and its trials' series (a copy of the store: opening one may write to it)."""
    path = tmp_path_factory.mktemp("phone") / "store.sqlite"
    shutil.copy(FIXTURES / "phone_sweep.sqlite", path)
    with Store(path, read_only=True) as store:
        results = store.query()
        return build_files(results, "PHONE", store.series), [load_series(r, store.series) for r in results]


def test_the_suites_scripts_read_the_export_as_their_own_files(phone):
    files, _ = phone
    # temperature.py turned our freq_temperature.result into exactly our freq_temperature.csv
    assert files["freq_temperature.csv"] == (SUITE / "freq_temperature.csv").read_text()
    # dataprocess.py rebuilt processed_data from our usage_monitor and time_table from our train_bench: the same
    # files, but for processPid, where its parser keeps the word "of" of "status of pid N" (as in its own results)
    base = f"{FOLDER}/processed_data/Lenet"
    assert files[f"{base}/time_table_Lenet.csv"] == (SUITE / base / "time_table_Lenet.csv").read_text()
    ours = csv_rows(files[f"{base}/processed_data_Lenet.csv"])
    theirs = csv_rows((SUITE / base / "processed_data_Lenet.csv").read_text())
    assert len(ours) == len(theirs) > 1000
    assert all(o | {"processPid": ""} == t | {"processPid": ""} for o, t in zip(ours, theirs, strict=True))
    assert {t["processPid"] for t in theirs} <= {"of", "nan"} and {o["processPid"] for o in ours} - {"nan"}
    # the rails' maxima over the training run: ours over every reading, the suite's over the rows that also hold a
    # top reading (it skips the others), so ours is at least theirs
    for o, t in zip(csv_rows(files[f"{base}/performance_Lenet.csv"]), csv_rows((SUITE / base / "performance_Lenet.csv")
                    .read_text()), strict=True):  # fmt: skip
        assert float(o["usb_current"]) >= float(t["usb_current"]) > 300_000


def test_the_suites_energy_agrees_with_edgebenchs_within_the_sampling_error(phone):
    """energy_compute.py's batchsize_energy (mean of the samples inside the training run, above the mean of its first
    10 samples) against ours (the trapezoid integral over the run, above the idle window's mean power): they may
    differ by the sampling error of a mean power over the window, three standard errors (T x sd / sqrt(n))."""
    files, loaded = phone
    ours = {int(r[""]): float(r["Lenet"]) for r in csv_rows(files[f"batchsize_energy_{FOLDER}.csv"])}
    theirs = {int(r[""]): float(r["Lenet"]) for r in csv_rows((SUITE / f"batchsize_energy_{FOLDER}.csv").read_text())}
    assert sorted(ours) == sorted(theirs) == [1, 2, 4, 8, 16]
    for ts in loaded:
        s, (t0, t1) = ts.samples, ts.train_ns
        watts = s.columns["usb_current_ua"] * s.columns["usb_voltage_uv"] / 1e12
        inside = watts[(s.t_ns > t0) & (s.t_ns < t1) & ~np.isnan(watts)]
        error_j = 3 * (t1 - t0) / 1e9 * inside.std(ddof=1) / np.sqrt(len(inside))
        bs = ts.result.trial.batch_size
        assert ours[bs] > 0.5  # the training run drew well above idle: not a comparison of noise
        assert abs(ours[bs] - theirs[bs]) <= error_j, (bs, ours[bs], theirs[bs], error_j)
    # singleBatch: ours divides by the run's batches (5 warm-up + 20 measured); the suite's script divides by its own
    # binary's fixed count (LeNet: 2 + 1024/bs + 100 + 1), which does not describe an edgebench run
    single = {int(r[""]): float(r["Lenet"]) for r in csv_rows(files[f"singleBatch_energy_{FOLDER}.csv"])}
    assert all(single[bs] == pytest.approx(ours[bs] / 25) for bs in ours)


def test_the_export_writes_every_file_in_the_suites_layout(phone):
    files, _ = phone
    assert set(files) == {
        *(f"{FOLDER}/train_stamp/Lenet/train_stamp_{bs}.result" for bs in (1, 2, 4, 8, 16)),
        *(f"{FOLDER}/processed_data/Lenet/{k}_Lenet.csv" for k in ("processed_data", "time_table", "performance")),
        f"{FOLDER}/usage_monitor/usage_monitor_Lenet.result",
        f"{FOLDER}/train_bench/train_bench_Lenet.result",
        f"{FOLDER}/bench_session.result",
        *(f"{kind}_energy_{FOLDER}.csv" for kind in ("batchsize", "singleBatch", "singleSample")),
        "freq_temperature.result",
        "freq_temperature.csv",
    }  # the sweep typed its mask "03": the folder says 03, not the normalised 3
    freq = files["freq_temperature.csv"].splitlines()
    assert freq[0] == ",stamp,temperature,cpu0,cpu1,cpu2,cpu3,cpu4,cpu5,cpu6,cpu7"
    assert freq[1] == "1,0,247,1785600,1785600,1785600,1785600,710400,710400,710400,825600"


def test_cells_are_written_as_the_suite_writes_them():
    assert [nan_or(v) for v in (None, float("nan"), 2400000.0, 2400000, 0.5, -3.0)] == [
        "nan", "nan", "2400000", "2400000", "0.5", "-3",
    ]  # fmt: skip
    assert [mib_text(v) for v in (66 * 2**20, 5.6 * 2**20, None)] == ["66M", "5.6M", "nan"]


def test_constant_power_has_no_energy_above_itself():
    window_s = 0.3
    gross = sum([2.0 * 0.1] * 3)  # 0.6000000000000001: integrated in pieces, as a trapezoid sum is
    assert gross - 2.0 * window_s != 0.0 and above_idle(gross, 2.0, window_s) == 0.0
    assert above_idle(1.0, 2.0, window_s) == pytest.approx(0.4) and above_idle(1.0, None, window_s) == 1.0


def test_folders_keep_the_mask_as_typed_and_an_uncontrolled_trial_is_the_unrooted_layout():
    def setting(mask="f0", freq=0):
        return Setting(mask, freq, 4, "fp32", "mnn", "cpu")

    names = folder_names("MEIZU", [setting("0f"), setting("f0"), setting("all"), setting("f0", 1_708_800)])
    assert names == {
        setting("0f"): "MEIZU_Core_0f",
        setting("f0"): "MEIZU_Core_f0",
        setting("all"): "MEIZU",
        setting("f0", 1_708_800): "MEIZU_Freq_1708800",
    }
    assert format_mask((0, 1, 2, 3)) == "f"  # what the folder would say were the typed text not kept


def test_a_sweep_keeps_the_typed_mask_and_still_runs_duplicates_once():
    from edgebench.config.sweep_file import load_config
    from edgebench.host.sysfs import SysFS
    from edgebench.sweep.plan import plan

    config = load_config(None, ["models=[lenet]", "batch_sizes=[1]", "cores=['03', '0-1', '0x3']"]).config
    planned = plan(config, source=None, sysfs=SysFS("/nonexistent"), allowed=(0, 1))
    assert [(p.trial.cores, p.trial.cores_mask) for p in planned.trials] == [((0, 1), "03")]


def test_the_raw_monitor_reads_as_the_suites_own_processing_of_it(tmp_path):
    """Xiaomi MI 9 (unrooted: no rails): usage_monitor_Lenet.result parsed here gives the rows the suite's
    dataprocess_unroot.py wrote to processed_data_Lenet.csv."""
    from_monitor = read_usage_monitor(SUITE_REPO / "XIAOMI/usage_monitor/usage_monitor_Lenet.result")
    from_csv = read_processed_data(SUITE_REPO / "XIAOMI/processed_data/Lenet/processed_data_Lenet.csv")
    assert from_monitor == from_csv and len(from_csv) == 373
    folder = tmp_path / "XIAOMI"
    shutil.copytree(SUITE_REPO / "XIAOMI", folder, ignore=shutil.ignore_patterns("processed_data"))
    imported = read_folder(folder, "Xiaomi MI 9")
    assert [r.trial.batch_size for r, _ in imported.trials] == [1, 2, 4, 8, 16]
    r, series = imported.trials[0]
    assert r.trial.cores is None and r.trial.freq_khz is None and r.energy.energy_j is None  # no rail: no energy, not 0
    assert r.latency.step_ms.mean == 9.657965 and "samples" in series
    files = build_files([r for r, _ in imported.trials], "XIAOMI", lambda tid, name: dict(
        next(s for t, s in imported.trials if t.trial_id == tid)).get(name))  # fmt: skip
    header = files["XIAOMI/processed_data/Lenet/processed_data_Lenet.csv"].splitlines()[0]
    assert header == ",stamp,processPid,VIRT,RES,SHR,cpuUsage"  # the unrooted layout: no power columns


@pytest.mark.parametrize(
    "line",
    [
        "Training latency of Lenet is : 8.825200 ms (batchsize is 1)",  # MnistBenchmarkUtils.cpp
        "Training latency on MobilenetV2Train is : 403.159515 ms (batchsize is 1)",  # mobilenetV2BenchmarkUtils.cpp
        "Training latency of Lenet on Mnist is : 16823.021484 ms (batchsize is 1)",  # benchmark/benchmark_batchsize.txt
    ],
    ids=["of-net", "on-mobilenetv2train", "of-net-on-dataset"],
)
def test_every_wording_of_the_suites_latency_lines_is_read(tmp_path, line):
    """The suite's demo programs print their means in more than one wording (each seen in its published folders)."""
    from edgebench.formats.mnn_suite.importing import read_train_bench

    train_ms = line.split(" : ")[1].split()[0]
    inferring = line.replace("Training", "Inferring").replace(train_ms, "0.500000")
    path = tmp_path / "train_bench_X.result"
    path.write_text(f"warmUp: 3\nmeasureIteration: 20\n{line}\n{inferring}\n")
    bench = read_train_bench(path)[1]
    assert bench.train_ms == pytest.approx(float(train_ms))
    assert bench.infer_ms == pytest.approx(0.5) and (bench.warmup, bench.steps) == (3, 20)


def test_the_measured_steps_round_trip_through_the_suites_files(tmp_path):
    """Recorded: the export wrote `measureIteration` = the steps asked (10) where `--min-time` measured 42, so a
    re-import counted the wrong steps and divided the run's energy by the wrong number of batches.  Now the file
    holds the steps measured and the batches the run trained, and the import reads back both."""
    from tests.factories import power_samples, result, save

    steps = [1.0] * 42
    asked_ten = result("20260101-000009-0009", steps, batch_size=1, cores=(4, 5, 6, 7), threads=4, steps=10,
                       energy_j=1.0)  # fmt: skip
    assert (asked_ten.trial.steps, asked_ten.latency.step_ms.n) == (10, 42)
    with Store(tmp_path / "s.sqlite") as store:
        save(store, asked_ten, steps, **power_samples(500_000))
        files = build_files(store.query(), "MEIZU", store.series)
    bench = files["MEIZU_Core_f0/train_bench/train_bench_Lenet.result"]
    assert " measureIteration: 42 " in bench.splitlines() and " edgebench batches: 43 " in bench.splitlines()
    for rel, text in files.items():
        (tmp_path / "out" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "out" / rel).write_text(text)
    ((back, _),) = read_folder(tmp_path / "out" / "MEIZU_Core_f0", "MEIZU").trials
    assert (back.trial.steps, back.trial.warmup) == (42, asked_ten.trial.warmup)
    assert back.latency.measured_steps == back.latency.step_ms.n == 42
    assert back.latency.step_ms.mean == pytest.approx(asked_ten.latency.step_ms.mean, abs=1e-6)
    assert back.energy.per_step_j == pytest.approx(back.energy.energy_j / 43)  # warm-up + measured, no extra batch
    assert "/ 43 batches (warmUp + measureIteration: edgebench's run)" in back.energy.notes[0]
