"""``--counters`` on a ``--command`` trial: the user's command's whole process tree counted for real, per step
where its step lines bracket the steps (this machine: edgebench's launcher over perf_event_open), over the whole
run through ``perf stat`` on a device reached over SSH, and refused in one line naming what a device lacks."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from edgebench.errors import UsageError
from edgebench.launch.trial import run_trial
from edgebench.records.events import Step
from edgebench.records.trial import Trial
from edgebench.store import Store
from edgebench.store.trials import finished_of
from tests.conftest import json_out
from tests.paths import HAS_PMU
from tests.sshd import board, sshd  # noqa: F401  (the fixtures)

EVENTS = "task-clock,context-switches,page-faults"
PERF_INSTALL = "apt-get install -y linux-perf"
PATTERN = r"^step (?P<i>\d+) cpu_ns (?P<cpu_ns>\d+)$"
#: Busy for 60 ms of CPU per step and say how much CPU time the step took by the process's own clock.
BUSY = """
import time
for i in range(4):
    t = time.process_time_ns()
    while time.process_time_ns() - t < 60_000_000:
        pass
    print(f"step {i} cpu_ns {time.process_time_ns() - t}", flush=True)
"""


def _busy_command(tmp_path: Path) -> str:
    script = tmp_path / "busy.py"
    script.write_text(BUSY)
    # `| cat`: the Python process is a child of the command's shell, not the shell itself: the tree is counted
    return f"{sys.executable} {script} | cat"


def test_a_local_command_trial_counts_its_process_tree_per_step(cli, tmp_path):
    proc = cli("run", "--command", _busy_command(tmp_path), "--step-pattern", PATTERN,
               "--warmup", "1", "--steps", "3", "--counters", EVENTS, "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json_out(proc)
    assert out["status"] == "ok", out.get("reason")
    per_step, run = out["cpu"]["perf_counters_per_step"], out["cpu"]["perf_counters_run"]
    assert set(per_step) == set(run) == set(EVENTS.split(","))
    with Store(cli.store_path) as db:
        stored = finished_of(db, db.get(out["trial_id"]))
    steps = [e for e in stored.events if isinstance(e, Step)]
    assert len(steps) == 4 and all(s.counters for s in steps)
    # the command's own CPU clock per step (printed on its step line) against the task-clock counted around it:
    # the same CPU time measured twice (each reading is taken when the line reaches the launcher, a pipe hop or two
    # after the print, so a step's window is shifted by that much against the command's own)
    ready = next(e for e in stored.events if e.event == "ready")
    own_ns = [float(v) for v in ready.env["step_groups"]["cpu_ns"]]
    measured = [s.counters["task-clock"] for s in steps]
    for counted, own in zip(measured[1:], own_ns[1:], strict=True):
        assert abs(counted - own) < 0.2 * own, (measured, own_ns)
    # Python's start-up is in the first (warm-up) step only: its page faults and CPU time
    assert steps[0].counters["page-faults"] > 10 * max(s.counters["page-faults"] for s in steps[1:]) >= 0
    assert steps[0].counters["task-clock"] > measured[1]
    assert run["task-clock"] >= sum(s.counters["task-clock"] for s in steps)
    assert run["context-switches"] >= 0 and per_step["page-faults"] >= 0
    assert any(n.startswith("perf counters cover the command's whole process tree") for n in out["measurement_notes"])
    shown = cli("show", out["trial_id"])
    assert "perf counters per step" in shown.stdout and "perf counters, whole run" in shown.stdout
    layers = cli("layers", out["trial_id"], "--json")
    assert layers.returncode == 0, layers.stderr
    doc = json.loads(layers.stdout)
    assert doc["granularity"] == "steps" and [r["index"] for r in doc["steps"]] == [0, 0, 1, 2]
    assert "whole run" in cli("layers", out["trial_id"]).stdout


def test_a_hardware_event_on_a_local_command_trial_is_one_line(cli):
    proc = cli("run", "--command", "echo step 0", "--step-pattern", "step", "--steps", "1", "--warmup", "0",
               "--counters", "task-clock,cycles")  # fmt: skip
    if HAS_PMU:
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("edgebench: error: --counters: cycles is a hardware event")
        assert len(proc.stderr.strip().splitlines()) == 1


def _ssh_trial(tmp_path: Path, **extra) -> Trial:
    fields = {"command": _busy_command(tmp_path), "step_pattern": PATTERN, "steps": 3,
              "warmup": 1, "idle_s": 0, "counters": ("task-clock", "page-faults")}  # fmt: skip
    return Trial(**{**fields, **extra})


def test_a_command_trial_over_ssh_is_counted_by_the_devices_perf_stat(board, tmp_path):  # noqa: F811
    assert shutil.which("perf"), f"perf is needed on the test's SSH 'device' (127.0.0.1): {PERF_INSTALL}"
    run = run_trial(_ssh_trial(tmp_path), target=board())
    assert run.result.ok, run.result.reason
    counted = run.result.cpu.perf_counters_run
    assert counted is not None and counted["task-clock"] >= 4 * 55e6 and counted["page-faults"] > 0
    assert run.result.cpu.perf_counters_per_step is None  # perf stat reads at the exit only
    assert any("`perf stat` on the device ran the command" in n for n in run.result.measurement_notes or [])
    assert not list((tmp_path / "work").glob("*.counters"))  # its file was read and deleted on the device


def test_a_device_without_perf_or_simpleperf_is_refused_in_one_line(board, tmp_path):  # noqa: F811
    bare = tmp_path / "bin"
    bare.mkdir()
    for name in ("cat", "mkdir", "rm", "mv", "sh", "id"):  # what the target needs, and no perf
        (bare / name).symlink_to(shutil.which(name))
    target = board(env={"PATH": str(bare)})
    with pytest.raises(UsageError, match=r"neither is on its PATH") as refused:
        run_trial(_ssh_trial(tmp_path), target=target)
    assert "simpleperf" in str(refused.value) and "\n" not in str(refused.value)
    if not HAS_PMU:
        assert shutil.which("perf"), PERF_INSTALL
        with pytest.raises(UsageError, match=r"`perf stat` on board cannot count cycles"):
            run_trial(_ssh_trial(tmp_path, counters=("task-clock", "cycles")), target=board())
