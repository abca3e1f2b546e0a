"""What the tests start from, built by hand or copied from the fixtures: results and stores with known step times
(no worker involved), a finished trial, a writable device tree, and the checks shared by both halves of a test
module (``tests/unit/<package>/`` and ``tests/e2e/<package>/`` import from here, never from each other)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from edgebench.measure.stats import summarize
from edgebench.measure.trial import measure
from edgebench.records.bundle import TrialBundle
from edgebench.records.events import Done, Ready, Step, as_events
from edgebench.records.finished import FinishedTrial
from edgebench.records.result import SweepInfo, TrialResult
from edgebench.records.result_schema import load_result
from edgebench.records.sampling import SamplerMeta
from edgebench.records.trial import Trial
from edgebench.store import Store
from tests.paths import FIXTURES, GOLDEN_STORE

MS = 1_000_000


def events(step_ms: list[float], infer_ms: list[float] = (), t0_ns: int = 10**12) -> list[dict[str, Any]]:
    """Step events laid end to end from ``t0_ns``: a warm-up step, the training steps, the inference passes."""
    out, t = [], t0_ns
    for phase, durations in (("warmup", [step_ms[0]]), ("train", step_ms), ("infer", list(infer_ms))):
        for i, ms in enumerate(durations):
            out.append({"event": "step", "phase": phase, "index": i, "start_ns": t, "end_ns": t + int(ms * MS),
                        "loss": 1.0 if phase != "infer" else None})  # fmt: skip
            t += int(ms * MS)
    return out


def result(
    trial_id: str,
    step_ms: list[float],
    *,
    model: str = "lenet",
    batch_size: int = 8,
    cores: list[int] = (0, 1),
    threads: int = 2,
    infer_ms: list[float] = (),
    sweep: tuple[str, str, int] | None = None,
    **fields: Any,
) -> TrialResult:
    """A result written as a schema-3 record (flat names: ``peak_memory_bytes=``, ``env=``) and loaded through the
    migration, as a stored record of that schema is: the tests that build one exercise the migration too."""
    record: dict[str, Any] = dict(
        trial_id=trial_id, status="ok", model=model, batch_size=batch_size, threads=threads, cores=list(cores),
        steps=len(step_ms), warmup=1, step_time_ms=summarize(step_ms),
        throughput_sps=batch_size * len(step_ms) / (sum(step_ms) / 1e3),
        infer_time_ms=summarize(infer_ms) if infer_ms else None, env={"hostname": "board-a"},
    )  # fmt: skip
    if sweep is not None:
        record["sweep"] = SweepInfo(sweep_id=sweep[0], trial_key=sweep[1], position=sweep[2])
    record.update(fields)
    flat = {k: v.model_dump() if hasattr(v, "model_dump") else v for k, v in record.items()}
    return load_result({"schema_version": 3, **flat})


def with_context(r: TrialResult, context: Any) -> TrialResult:
    """A stand-in runner's result recorded with the launch context it was handed, as measuring records it."""
    if context is None:
        return r
    cpu = r.cpu.model_copy(update={"freq_applied_khz": context.freq_applied_khz})
    return r.model_copy(update={"target": context.target, "sweep": context.sweep, "repeat": context.repeat, "cpu": cpu})


def save(store: Any, r: TrialResult, step_ms: list[float], infer_ms: list[float] = (), **series: str) -> None:
    lines = "\n".join(json.dumps(e) for e in events(step_ms, infer_ms))
    store.save(r, {"events": lines, **series})


SAMPLES_CSV = "t_ns,cpu0_active_ticks,cpu0_idle_ticks\n1000000000000,5,5\n1000020000000,7,6\n1000040000000,9,7\n"


def finished(trial_id: str = "20260101-000000-aaaa0001") -> FinishedTrial:
    """A trial measured from a hand-built bundle: steps, samples with their meta, the device's environment."""
    steps = [e for e in as_events(events([10.0, 12.0, 11.0])) if isinstance(e, Step)]
    bundle = TrialBundle(
        trial=Trial(model="lenet", steps=3, cores=(0,), threads=1),
        events=[Ready(pid=7), *steps, Done(stopped_by="fixed")],
        samples_csv=SAMPLES_CSV,
        sampler_meta=SamplerMeta(
            interval_ms=10, columns=["cpu0_active_ticks", "cpu0_idle_ticks"], sensors=["procstat"], unavailable={}
        ),
        env={"hostname": "board-a"},
    )
    return FinishedTrial.from_bundle(measure(bundle, trial_id), bundle)


def steps(mean: float, seed: int, n: int = 30, sd: float = 0.5) -> list[float]:
    return [round(float(v), 6) for v in np.random.default_rng(seed).normal(mean, sd, n)]


def add(store, trial_id, step_ms, **fields):
    save(store, result(trial_id, step_ms, **fields), step_ms)


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


POLICIES = "sys/devices/system/cpu/cpufreq"


def laptop_tree(folder: Path) -> Path:
    """A writable copy of the Intel laptop tree with acpi-cpufreq's boost switch on and a busy load average."""
    root = folder / "laptop"
    shutil.copytree(FIXTURES / "sysfs" / "intel_laptop", root)
    (root / POLICIES / "boost").write_text("1\n")
    (root / "proc").mkdir(exist_ok=True)
    (root / "proc" / "loadavg").write_text("6.50 5.00 4.00 3/400 1234\n")
    return root


def copy_of_the_golden_store(folder: Path) -> Path:
    """A copy of the schema-3 store in ``folder``: opening a store may upgrade it in place, the golden file never."""
    path = folder / "store.sqlite"
    shutil.copy(GOLDEN_STORE, path)
    return path


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def readable(text: str, *whole: str) -> None:
    assert "…" not in text, text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80, text
    for word in whole:
        assert word in text, word


def refused(capsys: Any, *argv: str) -> str:
    """Run ``edgebench ARGV`` in this process and require a refusal: exit code 2 and one line on stderr, which is
    returned (the hostile-input probes of issue 39 each end here).  Nothing the refusal wrote to stdout counts."""
    from edgebench.cli import main

    capsys.readouterr()
    code = main(list(argv))
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("edgebench: error: "), (code, err)
    return lines[0]


def relabel_models(store: Path, model: str, new: str) -> None:
    """Rename ``model`` to ``new`` in every trial of ``store`` (its column and its record), as an edited or imported
    store can hold any name: the hostile-input tests plant a ``module:attr`` or markup this way."""
    import sqlite3

    def sub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: sub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [sub(v) for v in value]
        return new if value == model else value

    with sqlite3.connect(store) as db:
        for trial_id, record in db.execute("SELECT trial_id, result_json FROM trials WHERE model = ?", (model,)):
            db.execute("UPDATE trials SET model = ?, result_json = ? WHERE trial_id = ?",
                       (new, json.dumps(sub(json.loads(record))), trial_id))  # fmt: skip
    db.close()
