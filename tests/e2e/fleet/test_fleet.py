"""Fleets on a real Ray cluster started here: a head (reached at 127.0.0.1) and two more nodes, each joined with
``edgebench fleet join`` and its own devices; trials land on the devices they name, a node killed mid-sweep
leaves its trial ``crashed`` and the rest stored, ``--resume`` reruns only what is missing."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from edgebench.config.sweep_file import CooldownConfig, load_config
from edgebench.errors import UsageError
from edgebench.fleet.raycluster import connect
from edgebench.host.sysfs import SysFS
from edgebench.store import Store
from edgebench.sweep.execute import SilentReporter
from edgebench.sweep.job import SweepJob
from edgebench.sweep.plan import plan
from tests.conftest import FIXTURES
from tests.ray_cluster import LocalCluster

#: Short real trials: a command workload of two sleeping steps (the agent, its sampler and the store all real).
TINY = ["models=[lenet]", "backend=command", "command=sleep 0.1; echo step; sleep 0.1; echo step",
        "step_pattern=^step$", "steps=2", "warmup=0", "infer_steps=0", "idle=0"]  # fmt: skip


def test_ray_executor_without_ray_says_what_to_install(tmp_path):
    """Ray missing: one line naming the extra, exit 2, no store written."""
    code = ("import sys; sys.modules['ray'] = None; from edgebench.cli import main; "
            "sys.exit(main(sys.argv[1:]))")  # fmt: skip
    store = tmp_path / "s.sqlite"
    args = ["sweep", "--set", "models=[lenet]", "--executor", "ray", "--store", str(store)]
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "edgebench: error: --executor: the ray executor needs Ray: pip install 'edgebench[fleet]'"
    ]
    assert not store.exists()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """h1 (the head: local@h1, board-a), h2 (local@h2 reading a copy of a Raspberry Pi 4's files, board-b), h3
    (board-c; killed by one test)."""
    try:
        import ray
    except ImportError:
        pytest.fail("the fleet tests need Ray: pip install 'edgebench[fleet]'")
    c = LocalCluster(tmp_path_factory.mktemp("fleet"))
    c.pi = c.root / "rpi4"
    shutil.copytree(FIXTURES / "sysfs" / "rpi4", c.pi)
    try:
        c.join("h1", targets={"board-a": "local"}, classes={"board-a": "board"})
        c.join("h2", targets={"board-b": "local"}, classes={"board-b": "board"}, sysfs_root=c.pi)
        c.join("h3", targets={"board-c": "local"}, classes={"board-c": "board"})
        c.sigterm_before = signal.getsignal(signal.SIGTERM)
        connect(c.address)  # as the sweep's driver joins: ray.init, Ray's SIGTERM handler taken back out
        yield c
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.stop()


def edgebench(cluster, *args, timeout=300):
    code = "import sys; from edgebench.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                          env=cluster.env, check=False)  # fmt: skip


def job_for(overrides, store, *, target="local", name, resume=False, retry_failed=False):
    config = load_config(None, [*TINY, f"name={name}", *overrides]).config
    planned = plan(config, source=None, sysfs=SysFS("/nonexistent"), allowed=tuple(sorted(os.sched_getaffinity(0))))
    return SweepJob(plan=planned, store=store, config_json="{}", cooldown=CooldownConfig(), reporter=SilentReporter(),
                    resume=resume, retry_failed=retry_failed, target=target)  # fmt: skip


def run_ray(cluster, job):
    from edgebench.fleet.raycluster import RayExecutor

    return RayExecutor(address=cluster.address).run(job)


def test_the_driver_keeps_its_sigterm_handler(cluster):
    """ray.init installs a SIGTERM handler of its own and never restores the old one; the sweep owns SIGTERM."""
    assert signal.getsignal(signal.SIGTERM) is cluster.sigterm_before


def test_fleet_status_lists_every_device_as_json_only(cluster):
    done = edgebench(cluster, "fleet", "status", "--address", cluster.address, "--json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)  # nothing of Ray's on stdout
    found = {(d["device"], d["class"], d["host"]) for d in status["devices"]}
    assert found == {("local@h1", "local", "h1"), ("board-a", "board", "h1"), ("local@h2", "local", "h2"),
                     ("board-b", "board", "h2"), ("local@h3", "local", "h3"), ("board-c", "board", "h3")}  # fmt: skip
    assert all(d["running"] is None for d in status["devices"])


def test_pinned_trials_run_on_the_named_device_s_host(cluster, tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        outcome = run_ray(cluster, job_for(["batch_sizes=[1, 2]"], store, target="board-b", name="pinned"))
        stored = store.query(sweep_id="pinned")
    assert [r.status for r in outcome.results] == ["ok", "ok"]
    assert {r.sweep.host for r in stored} == {"h2"}


def test_unknown_device_is_refused_before_anything_is_stored(cluster, tmp_path):
    with Store(tmp_path / "s.sqlite") as store:
        with pytest.raises(UsageError, match=r"--target: no device of this Ray cluster is device nope .*fleet join"):
            run_ray(cluster, job_for([], store, target="nope", name="nope"))
        assert store.query(sweep_id="nope") == []


@pytest.mark.parametrize("axis", ["", "targets: [local]\n"], ids=["plain", "targets-axis"])
def test_one_sweep_file_gives_the_same_records_on_both_executors(cluster, tmp_path, axis):
    """The same file, the local executor and Ray: the same trials, keys and settings; only hosts and times differ.
    With a ``targets:`` axis the local executor runs a process per target, Ray one driver: the same sweeps."""
    config = tmp_path / "same.yaml"
    config.write_text(
        'models: [lenet]\nbackend: command\ncommand: "sleep 0.1; echo step; sleep 0.1; echo step"\n'
        f'step_pattern: "^step$"\nbatch_sizes: [1, 2, 3]\nsteps: 2\nwarmup: 0\ninfer_steps: 0\nidle: 0\n{axis}'
    )
    records = {}
    for executor in ("local", "ray"):
        store = tmp_path / f"{executor}.sqlite"
        extra = ["--address", cluster.address] if executor == "ray" else []
        done = edgebench(cluster, "sweep", str(config), "--executor", executor, "--store", str(store), *extra)
        assert done.returncode == 0, done.stderr
        # one repeat each: the lowest is named, not called clearly best (the line may wrap); trials too short for the
        # checks to say the device was quiet (a loaded machine's) pick nothing and say so
        best = (r"lowest time per sample for lenet \(latency-first\): lenet b\d t\S+ cpu\S+ command \[|"
                r"no best for lenet \(latency-first\): inconclusive: 3 of 3 trials disturbed")  # fmt: skip
        assert re.search(best, " ".join(done.stdout.split())), done.stdout
        with Store(store) as db:
            records[executor] = db.query()

    def comparable(r):  # fmt: skip
        t = r.trial
        return (r.sweep.sweep_id, r.sweep.trial_key, r.sweep.position, t.model, t.batch_size, t.threads, t.cores,
                r.status, r.target, t.mode, t.steps, r.schema_version)  # fmt: skip

    assert sorted(map(comparable, records["local"])) == sorted(map(comparable, records["ray"]))
    assert {r.sweep.sweep_id.startswith("same-local") for r in records["ray"]} == {bool(axis)}
    assert {r.sweep.host for r in records["ray"]} <= {"h1", "h2", "h3"}
    assert all(r.sweep.host for r in records["local"])


def axis_sweep_file(tmp_path, targets):
    """Two sweeps of a ``targets:`` axis that can only finish together: each trial's command waits until two
    trials have started, so trials run one at a time would never end (the test's timeout would)."""
    met = tmp_path / "met"
    met.mkdir()
    wait = f"touch {met}/$$; while [ $(ls {met} | wc -l) -lt 2 ]; do sleep 0.05; done"
    config = tmp_path / "axis.yaml"
    config.write_text(
        f'name: axis\nmodels: [lenet]\nbackend: command\ncommand: "{wait}; echo step; sleep 0.1; echo step"\n'
        'step_pattern: "^step$"\nbatch_sizes: [1, 2]\nsteps: 2\nwarmup: 0\ninfer_steps: 0\nidle: 0\n'
        f"targets: [{', '.join(targets)}]\n"
    )
    return config


def test_a_targets_axis_on_ray_runs_a_sweep_per_device_at_the_same_time(cluster, tmp_path):
    """``targets:`` in the file: the sweeps the local executor stores (``<name>-<target>``), each on its own device's
    host, both devices busy at once (the commands wait for each other)."""
    store = tmp_path / "s.sqlite"
    config = axis_sweep_file(tmp_path, ["board-a", "board-b"])
    planned = edgebench(cluster, "sweep", str(config), "--executor", "ray", "--dry-run")
    assert planned.returncode == 0, planned.stderr
    assert "sweep axis-board-a: 2 trials" in planned.stdout and "sweep axis-board-b: 2 trials" in planned.stdout
    done = edgebench(cluster, "sweep", str(config), "--executor", "ray", "--address", cluster.address,
                     "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Store(store) as db:
        found = {sid: sorted((r.trial.batch_size, r.sweep.host, r.status) for r in db.query(sweep_id=sid))
                 for sid in ("axis-board-a", "axis-board-b")}  # fmt: skip
    assert found == {"axis-board-a": [(1, "h1", "ok"), (2, "h1", "ok")],
                     "axis-board-b": [(1, "h2", "ok"), (2, "h2", "ok")]}  # fmt: skip
    assert "sweep axis-board-a" in done.stdout and "4 trials run, 0 already stored, 0 failed" in done.stdout


def test_a_targets_axis_naming_a_device_no_host_has_is_refused_before_anything_is_stored(cluster, tmp_path):
    store = tmp_path / "s.sqlite"
    config = axis_sweep_file(tmp_path, ["board-a", "nope"])
    done = edgebench(cluster, "sweep", str(config), "--executor", "ray", "--address", cluster.address,
                     "--store", str(store))  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert "targets: no device of this Ray cluster is device nope" in line and "fleet join" in line
    with Store(store) as db:
        assert db.query() == []


def cpufreq_state(root):
    """Governor and limits; ``scaling_setspeed`` is left out: the kernel derives it (a fixture tree cannot)."""
    files = sorted((root / "sys/devices/system/cpu").glob("cpufreq/policy*/scaling_*"))
    return {p: p.read_text().strip() for p in files if p.name != "scaling_setspeed"}


def test_ctrl_c_on_the_driver_cancels_and_restores_the_device_s_governor(cluster, tmp_path):
    """A trial pinned at a frequency on h2's CPU; SIGINT to the driver: exit 130 with the resume command, the
    governor back as it was on h2's device, nothing stored."""
    before = cpufreq_state(cluster.pi)
    policy = sorted((cluster.pi / "sys/devices/system/cpu/cpufreq").glob("policy*"))[0]
    khz = (policy / "scaling_available_frequencies").read_text().split()[0]
    store = tmp_path / "s.sqlite"
    code = "import sys; from edgebench.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["sweep", "--set", "models=[lenet]", "--set", "backend=command", "--set", "command=sleep 120; echo step",
            "--set", "step_pattern=^step$", "--set", "steps=1", "--set", "warmup=0", "--set", "infer_steps=0",
            "--set", "idle=0", "--set", f"frequencies=[{khz}]", "--set", "name=stopped", "--executor", "ray",
            "--address", cluster.address, "--target", "local@h2", "--sysfs-root", str(cluster.pi),
            "--store", str(store)]  # fmt: skip
    proc = subprocess.Popen([sys.executable, "-c", code, *args], env=cluster.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 180
    while cpufreq_state(cluster.pi) == before and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    pinned = cpufreq_state(cluster.pi)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=180)
    assert pinned != before, err
    assert proc.returncode == 130, err
    assert "--resume" in err and "--executor ray" in err
    assert cpufreq_state(cluster.pi) == before
    with Store(store) as db:
        assert db.query(sweep_id="stopped") == []


def test_node_killed_mid_sweep_crashes_its_trial_only_and_resume_reruns_it(cluster, tmp_path):
    import ray

    board_c = "edgebench-target:board-c"
    gate = tmp_path / "gate"  # every trial waits for it: board-c's trial is surely running when h3 is killed
    axis = ["batch_sizes=[1, 2, 3, 4]",
            f"command=while [ ! -e {gate} ]; do sleep 0.05; done; echo step; sleep 0.1; echo step"]  # fmt: skip
    ran = {}

    def run_in_thread():  # SQLite connections belong to their thread
        with Store(tmp_path / "s.sqlite") as store:
            ran["outcome"] = run_ray(cluster, job_for(axis, store, target="class:board", name="killed"))

    sweep = threading.Thread(target=run_in_thread, daemon=True)
    sweep.start()
    deadline, killed = time.monotonic() + 240, False
    while time.monotonic() < deadline and sweep.is_alive():
        if board_c not in ray.available_resources():  # a trial holds board-c (none left): its host goes away
            time.sleep(1.0)
            cluster.kill_node("h3")
            killed = True
            gate.touch()
            break
        time.sleep(0.1)
    gate.touch()
    sweep.join(timeout=300)
    assert killed, f"no trial ever ran on board-c: {[(r.sweep.host, r.status) for r in ran['outcome'].results]}"
    outcome = ran["outcome"]
    with Store(tmp_path / "s.sqlite") as store:
        stored = store.query(sweep_id="killed")
        crashed = [r for r in stored if r.status == "crashed"]
        assert len(crashed) == 1 and crashed[0].sweep.host == "h3", [
            (r.sweep.host, r.trial.batch_size, r.reason) for r in stored
        ]
        assert "host h3 (device board-c) left the fleet mid-trial" in crashed[0].reason
        assert len(stored) == 4 and len(outcome.results) == 4  # the rest went on, on board-a and board-b
        assert {r.sweep.host for r in stored if r.status == "ok"} <= {"h1", "h2"}

        again = run_ray(cluster, job_for(axis, store, target="class:board",
                                         name="killed", resume=True))  # fmt: skip
        assert again.results == [] and again.skipped == 4
        retried = run_ray(cluster, job_for(axis, store, target="class:board",
                                           name="killed", resume=True, retry_failed=True))  # fmt: skip
        assert [(r.trial.batch_size, r.status) for r in retried.results] == [(crashed[0].trial.batch_size, "ok")]
        assert retried.results[0].sweep.host in {"h1", "h2"}
