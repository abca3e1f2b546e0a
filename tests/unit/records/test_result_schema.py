"""Result schema 4: older records (schema 1, 2, 3) migrate field by field, an estimate can never sit where a
measurement goes, the device is a typed record, and the documented mapping is the one the migration runs."""

from __future__ import annotations

import json
import sqlite3

import pytest
from pydantic import ValidationError

from edgebench.records.device import DeviceEnvironment
from edgebench.records.events import Ready
from edgebench.records.quantization import Quantization
from edgebench.records.result import EstimatedEnergy, MeasuredEnergy, TrialResult, stored_trial
from edgebench.records.result_schema import MOVES, flat_record, load_result, mapping_table, migrate
from tests.paths import GOLDEN_STORE, ROOT

STATS = {"mean": 10.0, "median": 9.5, "p5": 9.0, "p95": 12.0, "std": 1.0, "ci95": 0.9, "n": 5, "cv": 0.1}
ENV = {"hostname": "board-a", "cpu_model": "Cortex-A57", "cpu_count": 4, "cores_online": "0-3", "cores_allowed": None,
       "governors": {"policy0": "schedutil"}, "freq_max_khz": {"policy0": 2035200}, "mem_total_bytes": 8 * 2**30,
       "machine": "aarch64", "kernel": "4.9.253", "os": "Linux-4.9", "python": "3.11.7", "sysfs_root": "/",
       "torch": "2.13.0", "torch_threads": 2, "affinity": [0, 1], "quantized_engine": "qnnpack"}  # fmt: skip

#: A schema-1 record: no ``schema_version`` and none of the fields schema 2 and 3 added.
V1 = {
    "trial_id": "20250101-000000-0001", "status": "ok", "reason": None, "model": "lenet", "batch_size": 8,
    "threads": 2, "cores": [0, 1], "steps": 5, "warmup": 1, "device": "cpu", "input_shape": [1, 28, 28],
    "num_classes": 10, "params": 61706, "started_at": "2025-01-01T00:00:00+00:00", "stopped_by": "fixed: 5 steps",
    "step_time_ms": STATS, "throughput_sps": 800.0, "cpu_util_pct": {"per_core": [90.0, None], "mean": 90.0},
    "idle_ratio": [0.1, None], "process_cpu_pct": 180.0, "peak_memory_bytes": 2**27, "peak_memory_source": "vmhwm",
    "infer_time_ms": STATS, "infer_peak_memory_bytes": 2**26, "cpu_freq_khz": [1e6, None],
    "temperature_c": {"CPU-therm": {"mean": 40.0, "max": 41.5}}, "loss": {"first": 2.3, "last": 2.1, "finite": True},
    "sampler": {"interval_ms": 10.0, "samples": 50, "late_samples": 0, "cpu_pct_of_core": 0.5, "sensors": ["cpu"],
                "unavailable": {}},
    "env": ENV, "backend": "torch",
}  # fmt: skip

#: Schema 2 added energy (measured and estimated), GPU utilization, sweep, precision, target CI, inference CPU,
#: VmPeak; the executor's host came with the sweep.
V2 = {
    **V1, "schema_version": 2, "gpu_peak_memory_bytes": 2**25, "energy_j": 8.0, "energy_per_step_j": 1.6,
    "energy_per_sample_j": 0.2, "energy_gross_j": 12.0, "energy_window_s": 0.5, "idle_power_w": 8.0,
    "idle_window_s": 2.0, "avg_power_w": 24.0, "energy_source": "rapl: psys (energy counter)",
    "energy_by_rail": {"psys": {"energy_j": 8.0, "gross_energy_j": 12.0, "avg_power_w": 24.0, "idle_power_w": 8.0}},
    "energy_notes": ["one note"], "measurement_notes": ["2 threads on 2 cores"], "estimated_energy_j": 3.0,
    "estimated_energy_per_step_j": 0.6, "estimated_energy_per_sample_j": 0.075, "estimated_avg_power_w": 6.0,
    "estimated_idle_power_w": 2.0, "estimated_energy_source": "estimated: linear-utilization: P = 2 W",
    "gpu_util_pct": {"per_gpu": [30.0], "mean": 30.0}, "precision": "bf16", "target": "ssh://board-a",
    "host": "fleet-a", "freq_khz": 1_420_800, "cores_mask": "03", "target_ci_pct": 2.0,
    "infer_process_cpu_pct": 150.0, "virtual_memory_peak_bytes": 2**30,
    "sweep": {"sweep_id": "s1", "trial_key": "abcd", "position": 3, "freq_set_khz": {"policy0": 1420800},
              "cooldown_s": 5.0, "cooldown_by": "fixed: 5 s"},
}  # fmt: skip

#: Schema 3 added predictability, the trace summary, throttling; then (within 3) mode, quantization, the time to
#: accuracy fields, preset, data and the memory budget.
V3 = {
    **V2, "schema_version": 3, "mode": "train", "preset": "mnist", "data": "mnist", "memory_budget_bytes": 2**31,
    "target_accuracy": 0.9, "reached_accuracy": True, "final_accuracy": 0.93, "time_to_accuracy_s": 12.5,
    "steps_to_accuracy": 150, "samples_to_accuracy": 1200, "energy_to_accuracy_j": 40.0, "eval_time_s": 1.5,
    "accuracy_curve": [{"step": 150, "accuracy": 0.93, "elapsed_s": 12.5}],
    "predictability": {"step_time_cv": 0.1, "steps_for_ci_1pct": 385, "steps_for_ci_5pct": 16,
                       "step_period_ms": 10.0, "utilization_periodicity": None,
                       "utilization_periodicity_mean": None, "periodicity_note": None},
    "trace": {"granularity": "layers", "spans": 120, "labels": 14, "covered_pct": 80.0},
    "throttling": {"hot_c": 91.5, "episodes": [], "throttled_s": 0.0}, "imported_from": None,
}  # fmt: skip


def test_a_schema_1_record_lands_in_the_groups():
    r = load_result(V1)
    assert r.schema_version == 4 and (r.trial_id, r.status, r.stopped_by) == (V1["trial_id"], "ok", "fixed: 5 steps")
    t = r.trial
    assert (t.model, t.batch_size, t.threads, t.cores, t.steps, t.warmup, t.device, t.backend) == (
        "lenet",
        8,
        2,
        (0, 1),
        5,
        1,
        "cpu",
        "torch",
    )
    assert (r.workload.input_shape, r.workload.num_classes, r.workload.params) == ([1, 28, 28], 10, 61706)
    assert r.latency.step_ms.mean == 10.0 and r.latency.infer_ms.n == 5 and r.latency.throughput_sps == 800.0
    assert r.latency.measured_steps == 5  # step_time_ms.n
    assert (r.memory.peak_bytes, r.memory.peak_source, r.memory.infer_peak_bytes) == (2**27, "vmhwm", 2**26)
    assert r.cpu.util_pct.per_core == [90.0, None] and r.cpu.idle_ratio == [0.1, None]
    assert r.cpu.process_pct == 180.0 and r.cpu.freq_khz == [1e6, None]
    assert r.temperature_c["CPU-therm"].max == 41.5 and r.loss.last == 2.1 and r.sampler.samples == 50
    assert r.device.hostname == "board-a" and r.device.torch == "2.13.0" and r.device.affinity == [0, 1]
    assert r.device.extra == {"quantized_engine": "qnnpack"}
    # what schema 1 did not measure is unmeasured, not zero
    assert r.energy == MeasuredEnergy() and r.estimated_energy is None and r.accuracy is None and r.sweep is None
    assert r.trial.precision == "fp32" and r.target == "local" and r.trace_summary is None


def test_a_schema_2_record_lands_in_the_groups():
    r = load_result(V2)
    e = r.energy
    assert (e.energy_j, e.per_step_j, e.per_sample_j, e.gross_j, e.window_s) == (8.0, 1.6, 0.2, 12.0, 0.5)
    assert (e.idle_power_w, e.idle_window_s, e.avg_power_w) == (8.0, 2.0, 24.0)
    assert e.source == "rapl: psys (energy counter)" and e.by_rail["psys"].gross_energy_j == 12.0
    assert e.notes == ["one note"] and r.measurement_notes == ["2 threads on 2 cores"]
    est = r.estimated_energy
    assert (est.energy_j, est.per_step_j, est.per_sample_j, est.avg_power_w, est.idle_power_w) == (
        3.0, 0.6, 0.075, 6.0, 2.0
    )  # fmt: skip
    assert est.power_model == "linear-utilization: P = 2 W" and est.source == V2["estimated_energy_source"]
    assert r.gpu_util_pct.mean == 30.0 and r.memory.gpu_peak_bytes == 2**25 and r.memory.virtual_peak_bytes == 2**30
    assert (r.trial.precision, r.trial.freq_khz, r.trial.cores_mask, r.trial.target_ci_pct) == (
        "bf16", 1_420_800, "03", 2.0
    )  # fmt: skip
    assert r.cpu.infer_process_pct == 150.0 and r.target == "ssh://board-a"
    assert r.sweep.sweep_id == "s1" and r.sweep.position == 3 and r.sweep.cooldown_by == "fixed: 5 s"
    assert r.sweep.host == "fleet-a"  # the executor's name for the host, beside the sweep it ran in


def test_a_schema_3_record_lands_in_the_groups():
    r = load_result(V3)
    assert (r.trial.mode, r.trial.preset, r.trial.data, r.trial.memory_budget_bytes) == (
        "train", "mnist", "mnist", 2**31
    )  # fmt: skip
    assert r.trial.until_accuracy == 0.9 and r.trial.trace == "layers"
    a = r.accuracy
    assert (a.reached, a.final, a.time_s, a.steps, a.samples, a.energy_j, a.eval_time_s) == (
        True, 0.93, 12.5, 150, 1200, 40.0, 1.5
    )  # fmt: skip
    assert a.curve[0].step == 150
    assert r.trace_summary.granularity == "layers" and r.trace_summary.labels == 14
    assert r.predictability.steps_for_ci_5pct == 16 and r.throttling.hot_c == 91.5


@pytest.mark.parametrize("record", [V1, V2, V3], ids=["v1", "v2", "v3"])
def test_every_old_field_is_read_back_under_its_old_name(record):
    """The trials table's flat form of a migrated record holds every field of the old one, value for value."""
    flat = flat_record(load_result(record))
    assert {k: flat[k] for k in record if k != "schema_version"} == {
        k: v for k, v in record.items() if k != "schema_version"
    }


def test_every_record_of_the_golden_store_round_trips_through_the_migration():
    for (text,) in sqlite3.connect(GOLDEN_STORE).execute("SELECT result_json FROM trials"):
        old = json.loads(text)
        result = load_result(old)
        assert load_result(json.loads(result.model_dump_json())) == result  # schema 4 loads as it is
        flat = flat_record(result)
        assert {k: flat[k] for k in old if k != "schema_version"} == {
            k: v for k, v in old.items() if k != "schema_version"
        }


def test_a_record_with_an_unknown_field_or_from_a_newer_edgebench_is_refused():
    with pytest.raises(ValueError, match="no schema-4 place for energy_per_sampel_j"):
        migrate({**V3, "energy_per_sampel_j": 1.0})
    with pytest.raises(ValueError, match="newer than this edgebench"):
        migrate({**V3, "schema_version": 5})


def test_an_estimate_is_never_stored_as_a_measurement():
    estimate = EstimatedEnergy(
        power_model="linear-utilization: P = 2 W", energy_j=1.0, per_step_j=0.1, per_sample_j=0.01, avg_power_w=3.0,
        idle_power_w=2.0,
    )  # fmt: skip
    base = load_result(V1)
    with pytest.raises(ValidationError):  # another type: not where a measurement goes
        TrialResult(**{**dict(base), "energy": estimate})
    with pytest.raises(ValidationError):  # nor its stored form
        TrialResult.model_validate({**base.model_dump(), "energy": estimate.model_dump()})
    with pytest.raises(ValidationError, match="is an estimate"):
        MeasuredEnergy(energy_j=1.0, source="estimated: linear-utilization")
    with pytest.raises(ValidationError):  # and a measurement is no estimate either
        TrialResult.model_validate({**base.model_dump(), "estimated_energy": MeasuredEnergy(energy_j=1.0).model_dump()})
    # schema 3 named the estimate in energy_source where nothing was measured: the estimate keeps it, alone
    only_estimated = {**V2, "energy_j": None, "energy_per_step_j": None, "energy_per_sample_j": None,
                      "energy_gross_j": None, "energy_window_s": None, "idle_power_w": None, "avg_power_w": None,
                      "energy_by_rail": None, "energy_source": V2["estimated_energy_source"]}  # fmt: skip
    r = load_result(only_estimated)
    assert r.energy.source is None and r.energy.energy_j is None
    assert r.estimated_energy.source == V2["estimated_energy_source"]
    assert flat_record(r)["energy_source"] == V2["estimated_energy_source"]  # the trials table as it was


def test_the_device_is_a_typed_record_with_one_hostname():
    device = DeviceEnvironment.from_env({**ENV, "mnn_threads": 4, "ort_providers": ["CPUExecutionProvider"]})
    assert device.hostname == "board-a" and device.cpu_count == 4 and device.governors == {"policy0": "schedutil"}
    assert device.freq_max_khz == {"policy0": 2035200} and device.mem_total_bytes == 8 * 2**30
    assert device.torch == "2.13.0" and device.torch_threads == 2 and device.affinity == [0, 1]
    # what no field names (a backend's own settings) is kept as it came, apart
    assert device.extra == {"quantized_engine": "qnnpack", "mnn_threads": 4, "ort_providers": ["CPUExecutionProvider"]}
    assert DeviceEnvironment.from_env(device.to_env()) == device
    odd = DeviceEnvironment.from_env({"hostname": "b", "omp_num_threads": 4})  # an int where a str is declared
    assert odd.hostname == "b" and odd.omp_num_threads is None and odd.extra == {"omp_num_threads": 4}
    with pytest.raises(ValidationError):
        DeviceEnvironment(hostnme="typo")
    with pytest.raises(ValidationError):
        DeviceEnvironment(cpu_count="four")
    # the hostname lives in the device record only; the fleet's name for a host is the sweep's
    r = load_result(V2)
    assert "hostname" not in TrialResult.model_fields and "host" not in TrialResult.model_fields
    assert r.device.hostname == "board-a" and r.sweep.host == "fleet-a"


def test_a_stored_trial_is_read_as_recorded_without_lookups():
    """A result's trial loads without registry checks: a command trial's label, a model that no longer exists."""
    trial = stored_trial({"model": "somebody_elses_net", "backend": "command", "cores": [1, 0]})
    assert trial.model == "somebody_elses_net" and trial.cores == (1, 0)
    with pytest.raises(ValueError, match="unknown trial fields: modle"):
        stored_trial({"modle": "lenet"})


def test_the_mapping_table_in_the_docs_is_the_one_the_migration_runs():
    assert (ROOT / "docs" / "result-schema-v4.md").read_text() == mapping_table()
    assert {m.old for m in MOVES} >= set(V3) - {"schema_version"}


def test_the_ready_event_carries_a_typed_quantization():
    """The worker's ``ready`` event and the result hold the same record, validated where the event is made."""
    fields = {"method": "quantize_static, QDQ", "kind": "full", "calibration": "synthetic: 64 seeded inputs",
              "real_data": False, "compared_samples": 64, "top1_agreement": 0.98}  # fmt: skip
    ready = Ready(quantization=fields)
    assert isinstance(ready.quantization, Quantization) and ready.quantization.top1_agreement == 0.98
    with pytest.raises(ValidationError):
        Ready(quantization={**fields, "kind": "sometimes"})
    result = TrialResult(
        trial_id="t", status="ok", trial=stored_trial({"precision": "int8"}), quantization=ready.quantization
    )
    assert load_result(json.loads(result.model_dump_json())).quantization == ready.quantization


def test_a_diverged_loss_is_stored_as_none_and_reads_back():
    """JSON has no NaN: a trial whose loss diverged was written with ``null`` and then refused on reading, which
    made every trial of its store unreadable (``Store.trials``)."""
    from edgebench.records.result import LossSummary

    loss = LossSummary(first=6.9, last=float("nan"), finite=False)
    assert loss.last is None and LossSummary.model_validate_json(loss.model_dump_json()) == loss
