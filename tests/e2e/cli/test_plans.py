"""``feasibility`` and ``frameworks`` are plans run through the launch path: they take the device as ``run`` and
``sweep`` do (target, core roles, frequency, timeout from the settings' declaration), cool down and resume."""

from __future__ import annotations

import re

from edgebench.store import Store
from tests.conftest import json_out


def _default_timeout(cli, command):
    proc = cli(command, "--help")
    text = re.sub(r"\s+", " ", proc.stdout)
    return re.search(r"--timeout <str> .*?\[default: ([^\]]+)\]", text).group(1)


def test_every_command_has_the_same_timeout_default(cli):
    assert _default_timeout(cli, "feasibility") == _default_timeout(cli, "frameworks") == _default_timeout(cli, "run")


def test_feasibility_takes_the_target_and_cores_flags(cli):
    proc = cli("feasibility", "-m", "lenet", "--memory-budget", "1GiB", "--target", "nosuch-device")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --target: "), proc.stderr
    proc = cli("frameworks", "--models", "lenet", "--cores", "medium")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --cores: "), proc.stderr
    proc = cli("feasibility", "-m", "lenet", "--memory-budget", "1GiB", "--cooldown", "warm")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --cooldown: "), proc.stderr
    proc = cli("frameworks", "--models", "lenet", "--resume", "--no-store")
    assert proc.returncode == 2 and proc.stderr.startswith("edgebench: error: --resume: "), proc.stderr


FEASIBILITY = ("feasibility", "-m", "lenet", "--memory-budget", "1GiB", "--batch-sizes", "1,2", "--target", "local",
               "--cores", "all", "--cooldown", "0.1s", "--json")  # fmt: skip


def test_feasibility_is_a_plan_that_resumes(cli):
    first = cli(*FEASIBILITY)
    assert first.returncode == 0, first.stderr
    assert [c["status"] for c in json_out(first)["models"][0]["cells"]] == ["ok", "ok"]
    with Store(cli.store_path) as store:
        (sweep_id,) = store.sweep_ids()
        assert sweep_id.startswith("feasibility-") and len(store.trials()) == 2
    again = cli(*FEASIBILITY, "--resume")  # nothing left to run: the table comes from the store
    assert again.returncode == 0, again.stderr
    assert "2 trials already stored" in again.stderr
    assert json_out(again)["models"] == json_out(first)["models"]
    with Store(cli.store_path) as store:
        assert len(store.trials()) == 2 and store.sweep_ids() == [sweep_id]
    fresh = cli(*FEASIBILITY)  # without --resume: a new run of the same plan, measured again
    assert fresh.returncode == 0, fresh.stderr
    with Store(cli.store_path) as store:
        assert len(store.trials()) == 4 and len(store.sweep_ids()) == 2


def test_frameworks_is_a_plan_that_resumes(cli):
    args = ("frameworks", "--models", "lenet", "--backends", "torch,mace", "--precisions", "fp32", "--steps", "2",
            "--warmup", "0", "--cores", "all", "--json")  # fmt: skip
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    cells = {c["backend"]: c for c in json_out(first)["cells"]}
    assert (
        cells["torch"]["trial_id"] and cells["mace"]["reason"] == "mace is not a registered backend of this edgebench"
    )
    again = cli(*args, "--resume")
    assert again.returncode == 0, again.stderr
    assert {c["backend"]: c["trial_id"] for c in json_out(again)["cells"]}["torch"] == cells["torch"]["trial_id"]
    with Store(cli.store_path) as store:
        assert len(store.trials()) == 1


def test_frameworks_without_a_store_keeps_nothing(cli, tmp_path):
    args = ("frameworks", "--models", "lenet", "--backends", "torch", "--precisions", "fp32", "--steps", "1",
            "--warmup", "0", "--no-store", "--json")  # fmt: skip
    proc = cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert json_out(proc)["cells"][0]["trial_id"]
    assert not cli.store_path.exists()
