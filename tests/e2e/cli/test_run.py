"""``edgebench run`` end to end: the real CLI, a real worker process, a real sampler, a real SQLite store."""

import sqlite3

import pytest

from edgebench.store import Store
from tests.conftest import json_out

#: The --json fields a script may rely on (schema 4 paths; docs/result-schema-v4.md maps the schema-3 names).
CONTRACT = {
    "status", "trial.model", "trial.batch_size", "trial.threads", "trial.cores", "trial.steps", "trial.warmup",
    "latency.step_ms", "latency.throughput_sps", "cpu.util_pct", "cpu.idle_ratio", "memory.peak_bytes",
    "latency.infer_ms", "energy.energy_j", "device", "trial_id",
}  # fmt: skip


def paths(record: dict, prefix: str = "") -> set[str]:
    """Every dotted path of a JSON record's objects."""
    out = set()
    for key, value in record.items():
        out.add(prefix + key)
        if isinstance(value, dict):
            out |= paths(value, f"{prefix}{key}.")
    return out


def trial_count(path) -> int:
    if not path.exists():
        return 0
    return sqlite3.connect(path).execute("SELECT count(*) FROM trials").fetchone()[0]


def test_lenet_two_steps_json_contract_and_store(cli):
    proc = cli("run", "--model", "lenet", "--batch-size", "8", "--steps", "2", "--warmup", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    r = json_out(proc)
    assert paths(r) >= CONTRACT
    assert (r["status"], r["trial"]["model"], r["trial"]["batch_size"], r["trial"]["steps"], r["trial"]["warmup"]) == (
        "ok",
        "lenet",
        8,
        2,
        1,
    )
    assert set(r["latency"]["step_ms"]) >= {"mean", "median", "p5", "p95", "std", "ci95"}
    assert r["latency"]["step_ms"]["n"] == 2  # the warm-up step is not in the statistics
    assert r["stopped_by"] == "fixed: 2 steps"
    assert r["latency"]["step_ms"]["p5"] <= r["latency"]["step_ms"]["median"] <= r["latency"]["step_ms"]["p95"]
    assert r["latency"]["throughput_sps"] == pytest.approx(8 / (r["latency"]["step_ms"]["mean"] / 1e3), rel=1e-6)
    n_cores = len(r["trial"]["cores"])
    assert len(r["cpu"]["util_pct"]["per_core"]) >= n_cores and len(r["cpu"]["idle_ratio"]) >= n_cores
    assert 0 < r["cpu"]["util_pct"]["mean"] <= 100
    assert r["memory"]["peak_bytes"] > 50 * 2**20  # torch alone is resident
    assert r["latency"]["infer_ms"]["median"] > 0
    assert r["energy"]["energy_j"] is None  # no power sensor on this machine
    assert r["device"]["torch"].startswith("2.13.0") and r["device"]["cpu_count"] >= 1
    assert r["trial"]["threads"] == n_cores
    assert r["loss"]["finite"]
    assert r["sampler"]["samples"] > 0 and "cpu_time" in r["sampler"]["sensors"]

    with Store(cli.store_path) as store:
        stored = store.get(r["trial_id"])
        assert stored.latency.step_ms.median == r["latency"]["step_ms"]["median"]
        assert store.series(r["trial_id"], "samples").startswith("t_ns,cpu0_active_ticks")
        assert '"phase": "train"' in store.series(r["trial_id"], "events")


def test_default_run_prints_a_summary_table(cli):
    proc = cli("run", "--steps", "3", "--warmup", "1", "--infer-steps", "2")
    assert proc.returncode == 0, proc.stderr
    for text in ("lenet", "train step (ms)", "throughput", "peak memory", "cpu util"):
        assert text in proc.stdout
    assert trial_count(cli.store_path) == 1


def test_core_mask_pins_the_worker(cli):
    r = json_out(cli("run", "--steps", "2", "--warmup", "0", "--cores", "0x1", "--json", "--no-store"))
    assert r["trial"]["cores"] == [0] and r["trial"]["threads"] == 1
    assert r["device"]["affinity"] == [0] and r["device"]["torch_threads"] == 1
    assert not cli.store_path.exists()


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--model", "resnet9000"], "--model"),
        (["--batch-size", "0"], "--batch-size"),
        (["--batch-size", "many"], "--batch-size"),
        (["--cores", "0x100"], "--cores"),
        (["--cores", "zz"], "--cores"),
        (["--interval", "fast"], "--interval"),
        (["--input-shape", "3x0"], "--input-shape"),
        (["--warmup", "-1"], "--warmup"),
        (["--data", "mnist", "--until-accuracy", "0.9", "--trace", "layers"], "--trace"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_stored(cli, args, flag):
    proc = cli("run", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgebench: error:") and flag in lines[0]
    assert trial_count(cli.store_path) == 0


def test_crashing_worker_is_recorded_and_exits_nonzero(cli):
    # A 4x4 input is too small for LeNet's 5x5 convolutions: the worker fails while building the model.
    proc = cli("run", "--input-shape", "1x4x4", "--json")
    assert proc.returncode == 1
    r = json_out(proc)
    assert r["status"] == "crashed" and "RuntimeError" in r["reason"]
    assert r["latency"]["step_ms"] is None
    assert proc.stderr.strip().splitlines() == [f"edgebench: error: trial crashed: {r['reason']}"]
    with Store(cli.store_path) as store:
        assert store.get(r["trial_id"]).status == "crashed"


def test_timeout_is_recorded(cli):
    proc = cli("run", "--backend", "fake", "--steps", "100000", "--timeout", "3s", "--json")
    assert proc.returncode == 1
    r = json_out(proc)
    assert r["status"] == "timeout" and "3 s" in r["reason"]


def test_repeats_each_in_a_fresh_process_stored_as_one_configuration(cli):
    """`run --repeats 3`: three trials of one configuration, each its own worker process, stored as
    one run; the JSON carries each repeat and the configuration's interval over them; `trials` lists them together."""
    out = cli.json("run", "--backend", "fake", "--steps", "5", "--warmup", "1", "--idle", "0", "--repeats", "3",
                   "--json", env={"EDGEBENCH_FAKE_PROCESS_CV_PCT": "10"})  # fmt: skip
    repeats = out["repeats"]
    assert [r["repeat"]["index"] for r in repeats] == [0, 1, 2] and {r["repeat"]["planned"] for r in repeats} == {3}
    assert len({r["repeat"]["config_key"] for r in repeats}) == 1 and len({r["trial_id"] for r in repeats}) == 3
    assert {r["sweep"]["sweep_id"] for r in repeats} == {out["sweep_id"]} and out["sweep_id"].startswith("run-")
    configuration = out["configuration"]
    # a repeat a loaded machine disturbed (the suite's other worker beside it) is left out of the interval, by id
    usable = configuration["usable_repeats"]
    assert usable + len(configuration["disturbed"]) == 3, configuration
    if usable >= 2:
        assert configuration["interval_method"] == f"t interval over {usable} repeats", configuration
        assert configuration["ci95_low_ms"] < configuration["median_step_ms"] < configuration["ci95_high_ms"]
    listed = cli("trials", "--sweep", out["sweep_id"])
    assert listed.returncode == 0 and all(f"{k}/3" in listed.stdout for k in (1, 2, 3))
