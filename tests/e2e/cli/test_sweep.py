"""``edgebench sweep`` end to end: real workers, a real store, a sweep interrupted and killed for real, then resumed.
The sweep's trials run on the fake backend: the sweep's machinery is the point, and a framework's trials only cost
time (the torch trials' own tests are tests/e2e/cli/test_run.py's)."""

import os
import shutil
import signal

from edgebench.store import Store
from tests.conftest import json_out
from tests.sweeping import start_sweep, stored_keys, wait_for

# 2 models x 2 batch sizes x 2 core masks on the fake backend (5 ms steps).
CONFIG = """
backend: fake
models: [lenet, {name: squeezenet, input_shape: 3x32x32}]
batch_sizes: [1, 2]
cores: [0x1, 0x2]
steps: 3
warmup: 1
infer_steps: 2
"""


def test_sweep_interrupted_killed_and_resumed_runs_every_trial_once(tmp_path, cli):
    config = tmp_path / "grid.yaml"
    config.write_text(CONFIG)
    store = cli.store_path

    # Ctrl-C after two trials: a clean stop, exit 130, the finished trials kept
    proc = start_sweep(cli, str(config))
    wait_for(store, 2, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err.strip().splitlines()[-1]
    first = stored_keys(store)
    assert 2 <= len(first) < 8

    # again without --resume: refused, nothing run
    proc = cli("sweep", str(config))
    assert proc.returncode == 2 and "add --resume" in proc.stderr

    # resumed, then SIGKILLed (no cleanup at all) after one more trial
    proc = start_sweep(cli, str(config), "--resume")
    wait_for(store, len(first) + 1, proc)
    proc.kill()
    proc.communicate(timeout=60)
    second = stored_keys(store)
    assert second[: len(first)] == first

    # resumed to the end: every planned trial exactly once, none lost, none repeated
    proc = cli("sweep", str(config), "--resume")
    assert proc.returncode == 0, proc.stderr
    assert f"{len(second)} already stored" in proc.stdout
    keys = stored_keys(store)
    assert keys[: len(second)] == second and len(keys) == len(set(keys)) == 8
    with Store(store) as db:
        (sweep_id,) = db.sweep_ids()
        results = db.query(sweep_id=sweep_id)
    assert all(r.ok for r in results)
    grid = {(r.trial.model, r.trial.batch_size, tuple(r.trial.cores)) for r in results}
    assert grid == {(m, b, c) for m in ("lenet", "squeezenet") for b in (1, 2) for c in ((0,), (1,))}
    assert all(r.device.affinity == list(r.trial.cores) and r.trial.threads == 1 for r in results)

    # the same store, exported in the MNN suite's layout
    out_dir = tmp_path / "suite"
    proc = cli("export", "--format", "mnn-suite", "--device", "VM", "--out", str(out_dir), "--sweep", sweep_id)
    assert proc.returncode == 0, proc.stderr
    # the folders carry the masks as typed (0x2), as the suite's did
    table = (out_dir / "VM_Core_0x2/processed_data/Squeezenet/time_table_Squeezenet.csv").read_text().splitlines()
    assert table[0] == ",batchsize,expr_train,expr_infer,session_infer" and len(table) == 3
    (b2,) = [r for r in results if r.trial.model == "squeezenet" and r.trial.batch_size == 2 and r.trial.cores == (1,)]
    assert table[2] == f"2,2,{b2.latency.step_ms.mean:.6f},{b2.latency.infer_ms.mean:.6f},nan"
    energy = (out_dir / "batchsize_energy_VM_Core_0x1.csv").read_text().splitlines()
    # no power sensor here: the suite's nan
    assert energy == [",Lenet,GoogLenet,Squeezenet,Alexnet,Mobilenet", "1,nan,nan,nan,nan,nan", "2,nan,nan,nan,nan,nan"]

    # and two of its trials compared
    a, b = results[0].trial_id, results[1].trial_id
    r = json_out(cli("compare", a, b, "--json"))
    row = r["rows"][0]  # one process a side: a ratio, and no p-value as if it could separate run-to-run variance
    assert row["label"] == "step median (ms)" and row["ratio"] is not None and row["p_value"] is None


def test_frequency_sweep_on_a_fixture_tree_restores_the_governor(tmp_path, cli, sysfs_tree):
    tree = tmp_path / "rpi4"
    shutil.copytree(sysfs_tree("rpi4"), tree)
    policy = tree / "sys/devices/system/cpu/cpufreq/policy0"
    # the fake backend's steps: setting and restoring the clocks is the point, not what runs at them
    args = ["sweep", "--set", "batch_sizes=[4]", "--set", "steps=2", "--set", "warmup=0", "--set", "infer_steps=0",
            "--set", "frequencies=[600000, 1.5GHz]", "--set", "backend=fake", "--sysfs-root", str(tree)]  # fmt: skip
    proc = cli(*args)
    if os.geteuid() != 0:  # the refusal a user without root sees
        assert proc.returncode == 2 and "needs root" in proc.stderr and not cli.store_path.exists()
        return
    assert proc.returncode == 0, proc.stderr
    with Store(cli.store_path) as db:
        results = db.trials()
    assert sorted(r.sweep.freq_set_khz["policy0"] for r in results) == [600_000, 1_500_000]
    assert (policy / "scaling_governor").read_text().strip() == "ondemand"
    assert (policy / "scaling_min_freq").read_text().strip() == "600000"
    assert (policy / "scaling_max_freq").read_text().strip() == "1500000"


def test_bad_configuration_is_one_line_exit_2_and_nothing_stored(tmp_path, cli):
    config = tmp_path / "bad.yaml"
    config.write_text("models: [lenet]\nbatch_sizes: [1, 2, -4]\n")
    proc = cli("sweep", str(config))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"edgebench: error: {config}: batch_sizes[2]: must be greater than or equal to 1 (got -4)"
    ]
    assert not cli.store_path.exists()
    proc = cli("sweep", "--set", "cores=[0x1, 0x100]")
    assert proc.returncode == 2 and "cores[1]: cpu 8" in proc.stderr and not cli.store_path.exists()


def test_dry_run_lists_the_plan(cli):
    proc = cli("sweep", "--set", "models=[lenet, alexnet]", "--set", "batch_sizes=[1, 2]", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "4 trials" in proc.stdout and "alexnet b2" in proc.stdout
    assert not cli.store_path.exists()
