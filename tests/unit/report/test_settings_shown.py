"""Every setting a sweep varies is shown wherever trials are: a column of `trials` and of the report's summary, a
curve (or an axis) of the sweep plots, a row key of the report's MNN-suite and DNNTune tables; a configuration
measured twice is never one of its trials kept silently; a frequency is the one applied, the asked one beside it."""

from __future__ import annotations

from rich.console import Console

from edgebench.records.result import Cpu
from edgebench.report import figures as f
from edgebench.report.columns import summary_values
from edgebench.report.content import _framework_table, _mnn_tables
from edgebench.report.summary import summary_table
from edgebench.report.sweep_summary import freq_cell
from edgebench.report.trials_list import trials_table
from edgebench.sweep.plan import trial_label
from tests.factories import result


def cores_sweep():
    """A sweep over `cores: [0x1, 0x2]` at two batch sizes: four trials, one core each."""
    return [
        result(f"20260101-00000{i}-aaaa000{i}", [ms, ms + 0.1], batch_size=b, cores=cores, threads=1)
        for i, (b, cores, ms) in enumerate([(8, (0,), 5.0), (16, (0,), 8.0), (8, (1,), 6.0), (16, (1,), 9.5)], 1)
    ]


def rendered(table) -> str:
    console = Console(width=200, record=True)
    console.print(table)
    return console.export_text()


def test_a_cores_sweep_keeps_the_mask_in_trials_and_the_summary():
    """Recorded: a sweep over `cores: [0x1, 0x2]` lost the mask in `trials` and the report's summary."""
    results = cores_sweep()
    text = rendered(trials_table(results))
    header, *rows = [line.split() for line in text.splitlines()[2:8] if line.strip() and "─" not in line]
    assert "mask" in header and [row[header.index("mask")] for row in rows] == ["1", "1", "2", "2"]  # taskset's hex
    assert "1 thread(s)" in text.splitlines()[0]  # shared: named once in the title
    assert [summary_values(r)["cores"] for r in results] == ["1", "1", "2", "2"]
    one = rendered(trials_table(results[:2]))
    assert "mask 1" in one.splitlines()[0] and " mask " not in one.splitlines()[2]  # shared: in the title only


def test_a_cores_sweep_is_one_curve_per_core_set_and_each_set_its_own_place_on_the_cores_axis():
    """Recorded: `plot sweep` drew one zig-zag line through both masks, and `--x cores` put both at x=1.0."""
    results = cores_sweep()
    fig = f.sweep_curve(results, "step_time_ms", "batch_size")
    lines = [t for t in fig.traces if t.name != "best per model"]
    assert len(lines) == 2 and all(list(t.x) == [8.0, 16.0] for t in lines)
    assert {t.name for t in lines} == {"lenet cores=0", "lenet cores=1"}
    by_cores = f.sweep_curve(results, "step_time_ms", "cores")
    assert {tuple(t.x) for t in by_cores.traces if t.name != "best per model"} == {("0", "1")}
    assert "cores" in f.varying_axes(results)


def test_the_suite_and_dnntune_tables_key_every_varying_setting_and_name_a_trial_left_out():
    """Recorded: the report's suite and DNNTune tables kept one of two batch-8 trials without saying so."""
    results = cores_sweep()
    time_table = next(t for t in _mnn_tables(results) if t.key == "mnn-time")
    assert [row[0] for row in time_table.rows] == ["lenet mask 1", "lenet mask 2"]
    assert time_table.rows[0][1] == results[0].latency.step_ms.mean and not time_table.note
    dnntune = _framework_table(results)
    assert [row[:2] for row in dnntune.rows] == [["lenet mask 1", 8], ["lenet mask 1", 16],
                                                 ["lenet mask 2", 8], ["lenet mask 2", 16]]  # fmt: skip
    again = result("20260101-000009-aaaa0009", [7.0, 7.1], batch_size=8, cores=(0,), threads=1)
    time_table = next(t for t in _mnn_tables([*results, again]) if t.key == "mnn-time")
    assert time_table.rows[0][1] == again.latency.step_ms.mean  # the latest of the two
    assert "not in the table" in time_table.note and results[0].trial_id in time_table.note
    assert results[0].trial_id in _framework_table([*results, again]).note


def test_every_table_and_best_line_names_the_applied_frequency_with_the_asked_one_beside_it():
    asked = result("20260101-000001-aaaa0001", [5.0, 5.1], freq_khz=1_700_000)
    applied = asked.model_copy(update={"cpu": Cpu(freq_applied_khz={"policy0": 1_708_800, "policy4": 1_708_800})})
    assert applied.applied_freq_khz == 1_708_800 and asked.applied_freq_khz == 1_700_000  # no record: the asked
    assert freq_cell(applied) == "1708.8 (asked 1700)"
    assert trial_label(applied.trial, applied.applied_freq_khz).endswith("1708.8MHz (asked 1700MHz)")
    assert summary_values(applied)["freq_mhz"] == 1708.8
    assert f.x_value(applied, "freq_khz") == 1708.8


def test_an_inference_trial_says_its_peak_memory_is_the_inferences():
    """Recorded: inference trials said `peak memory (train)`."""
    infer = result("20260101-000001-aaaa0001", [2.0, 2.1], mode="infer", peak_memory_bytes=64 * 2**20)
    train = result("20260101-000002-aaaa0002", [2.0, 2.1], peak_memory_bytes=64 * 2**20)
    assert "peak memory (infer)" in rendered(summary_table(infer)) and "(train)" not in rendered(summary_table(infer))
    assert "peak memory (train)" in rendered(summary_table(train))
